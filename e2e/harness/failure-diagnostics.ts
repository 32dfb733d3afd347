// What the cluster looked like when a suite's test failed: every test namespace's pods, claims,
// custom resources (with the status the operator last wrote) and recent Events, and the logs of
// every pod there (the current containers and, after a restart, the ones before): the operators'
// in the test's output, the others' last lines only. A failure in CI is often seen once and never
// again (the cluster is torn down with the run), so the report goes to the test's output, where
// the CI log keeps it, and in full to a file.
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from './cluster-access.ts';

/** Namespaces made by createTestNamespace carry this label. */
const testNamespaceSelector = 'app.kubernetes.io/part-of=homeostat-e2e';
/** Every operator's pods, whichever chart installed them (the charts' shared labels). */
const operatorSelector = 'app.kubernetes.io/part-of=homeostat,app.kubernetes.io/component=operator';
/** Lines of each operator container's log in the printed report; the file keeps them all. */
const printedLogLines = 120;
/** Lines of each other pod's log (a database instance, its watcher) in the printed report. */
const printedOperandLines = 25;
const printedEvents = 60;
/** The custom resources whose status says what an operator last decided (each CRD exists only once its chart is installed). */
const homeostatKinds = ['etcdclusters', 'etcdbackups', 'postgresqlclusters', 'memcacheds'];

interface Section {
  title: string;
  /** All of it, for the file. */
  full: string;
  /** What the test's output shows. */
  printed: string;
}

const lastLines = (text: string, count: number) => text.trimEnd().split('\n').slice(-count).join('\n');

/** kubectl's output, or why it could not be read: a report must never fail the hook that writes it. */
async function read(args: readonly string[]): Promise<string> {
  return kubectl(args).catch((error: unknown) => `(unavailable: ${String(error).slice(0, 300)})`);
}

/** The names of the pods of `namespace` that `selector` (kubectl arguments) picks. */
async function podNames(namespace: string, selector: readonly string[]): Promise<string[]> {
  const names = await read([
    '-n',
    namespace,
    'get',
    'pods',
    ...selector,
    '-o',
    'jsonpath={.items[*].metadata.name}',
  ]);
  return names.startsWith('(unavailable')
    ? []
    : names.split(/\s+/).filter((name) => /^[a-z0-9.-]+$/.test(name));
}

async function namespaceSections(namespace: string): Promise<Section[]> {
  const sections: Section[] = [];
  const objects = await read(['-n', namespace, 'get', 'pods,pvc', '-o', 'wide']);
  sections.push({ title: `${namespace}: pods and claims`, full: objects, printed: objects });
  const events = await read(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']);
  sections.push({
    title: `${namespace}: events`,
    full: events,
    printed: lastLines(events, printedEvents),
  });
  for (const kind of homeostatKinds) {
    const found = await read(['-n', namespace, 'get', kind, '-o', 'yaml']);
    if (found.startsWith('(unavailable') || !/^- apiVersion:/m.test(found)) continue; // no CRD, or none of them
    sections.push({ title: `${namespace}: ${kind}`, full: found, printed: found });
  }
  const operators = new Set(await podNames(namespace, ['-l', operatorSelector]));
  for (const pod of await podNames(namespace, [])) {
    const operator = operators.has(pod);
    for (const previous of [false, true]) {
      const log = await read([
        '-n',
        namespace,
        'logs',
        pod,
        '--all-containers',
        '--prefix',
        ...(previous ? ['--previous'] : []),
      ]);
      if (previous && log.startsWith('(unavailable')) continue; // never restarted
      const title = `${namespace}/${pod}: ${operator ? 'operator' : 'pod'} log${previous ? ' (containers before the restart)' : ''}`;
      // The operators' decisions in the test's output; the operands' (database, watcher) in the file,
      // with only their last lines printed.
      sections.push({
        title,
        full: log,
        printed: lastLines(log, operator ? printedLogLines : printedOperandLines),
      });
    }
  }
  return sections;
}

/**
 * Writes the report for a failed test to a file and returns the part to print (with the file's
 * path). Reads only; never throws.
 */
export async function reportFailure(testName: string): Promise<string> {
  const listed = await read([
    'get',
    'namespaces',
    '-l',
    testNamespaceSelector,
    '-o',
    'jsonpath={.items[*].metadata.name}',
  ]);
  const namespaces = listed.startsWith('(unavailable') ? [] : listed.split(/\s+/).filter(Boolean);
  const sections = (await Promise.all(namespaces.map(namespaceSections))).flat();
  const render = (pick: (s: Section) => string) =>
    sections.map((s) => `----- ${s.title}\n${pick(s).trimEnd()}`).join('\n');
  const dir = join(tmpdir(), 'homeostat-e2e-failures');
  const file = join(
    dir,
    `${new Date().toISOString().replaceAll(':', '-')}-${testName.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 80)}.txt`,
  );
  const written = await mkdir(dir, { recursive: true })
    .then(() => writeFile(file, `${testName}\n${render((s) => s.full)}\n`))
    .then(() => `full report: ${file}`)
    .catch((error: unknown) => `full report not written: ${String(error)}`);
  if (!namespaces.length) return `no test namespace to report on (${listed.slice(0, 200)}); ${written}`;
  return `${render((s) => s.printed)}\n----- ${written}`;
}

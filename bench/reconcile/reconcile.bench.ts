// npm run bench:reconcile -- [--objects N] [--implementations typescript,controller-runtime]
//                             [--orders both|given] [--warm-up-objects N] [--workers W]
//                             [--idle-seconds S] [--kubeconfig PATH]
//                             [--node-flags '--max-semi-space-size=1'] [--controller-runtime-flags --json]
// The Widget workload (an owned ConfigMap, an Event and a status per Widget) through the
// TypeScript operator built on libs/reconcile and through a controller-runtime operator doing the
// same work, one after the other, on the same control plane (its own, or the cluster of
// --kubeconfig) with the same driver. Before either runs, the driver writes the workload itself
// for --warm-up-objects Widgets and deletes them (the API server's first writes cost more); then
// (--orders both, the default) the implementations run in the given order and again in the
// reverse one (A B B A), so that neither always runs first. For each run: the load average, seconds
// until all N Widgets are converged, reconciles and their mean duration, the writes it made, RSS
// before any object, after convergence and at its peak, CPU seconds, and writes per minute once
// converged (which must be 0). Prints one JSON line per run, a ratio line per order and one for
// both orders on stdout, tables on stderr. It prints figures; it asserts nothing about time.
// Whatever it starts ends with it, however it ends (support/teardown.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { installCrds, startControlPlane } from '@homeostat/testing';
import { KubeClient, builtin } from '@homeostat/reconcile';
import { widgetCrd, widgets } from '../../libs/reconcile/src/test-support/widget.ts';
import { sized } from '../support/bench-size.ts';
import { Teardown } from '../support/teardown.ts';
import { workloadWrites, workloadWriteTime, writeTimeByRequest } from './apiserver-writes.ts';
import { deleteAll, warmUpControlPlane } from './control-plane-warm-up.ts';
import { watchConvergence } from './convergence.ts';
import {
  implementations,
  meanReconcileSecondsOf,
  reconcilesOf,
  startOperator,
  type Implementation,
} from './operators.ts';
import { readProcessCpuSeconds, readProcessMemory } from './process-memory.ts';
import { bothOrders, ratios, table, type Ratios, type RunResult } from './report.ts';
import { widgetSpec } from './widget-workload.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: sized('1000', '20') },
    implementations: { type: 'string', default: implementations.join(',') },
    // both: the given order, then the reverse one; given: the given order once.
    orders: { type: 'string', default: 'both' },
    // Widgets the driver writes and deletes before the first run; default: as many as measured, at most 1000.
    'warm-up-objects': { type: 'string' },
    workers: { type: 'string', default: '4' },
    'idle-seconds': { type: 'string', default: sized('60', '5') },
    kubeconfig: { type: 'string' },
    // How many Widgets the driver creates at once.
    'create-concurrency': { type: 'string', default: '16' },
    // Node flags of the TypeScript operator, space-separated; default: the images' (operatorNodeFlags).
    'node-flags': { type: 'string' },
    // Flags of the controller-runtime operator, space-separated, e.g. --json (JSON for built-in kinds).
    'controller-runtime-flags': { type: 'string' },
  },
});
const objects = Number(values.objects);
const workers = Number(values.workers);
const idleSeconds = Number(values['idle-seconds']);
const warmUpObjects = Number(values['warm-up-objects'] ?? Math.min(objects, 1000));
if (values.orders !== 'both' && values.orders !== 'given') {
  throw new Error(`--orders is 'both' or 'given', not '${values.orders}'`);
}
const chosen = values.implementations.split(',').map((name) => {
  const known = implementations.find((i) => i === name.trim());
  if (!known) throw new Error(`unknown implementation '${name}' (known: ${implementations.join(', ')})`);
  return known;
});
// A run that never converges must end as a failure, not hang CI.
const convergeTimeoutMs = (60 + objects * 0.1) * 1000;
const say = (line: string) => console.error(`bench:reconcile ${line}`);
const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000;
const mb = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));

/** The driver's own client: the one place it is built. */
function driverClient(kubeconfigPath: string): { kubeConfig: KubeConfig; client: KubeClient } {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { kubeConfig, client: new KubeClient(kubeConfig, { fieldManager: 'bench' }) };
}

/** Waits until no workload write has landed for two seconds (bounded), and returns the count then. */
async function quietWrites(client: KubeClient): Promise<number> {
  let last = await workloadWrites(client);
  for (let quiet = 0, waited = 0; quiet < 2 && waited < 30; waited++) {
    await sleep(1000);
    const now = await workloadWrites(client);
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

const loadAverage = () => Number((loadavg()[0] ?? 0).toFixed(2));

async function runOne(
  implementation: Implementation,
  order: string,
  client: KubeClient,
  kubeconfigPath: string,
  workDir: string,
  teardown: Teardown,
): Promise<RunResult> {
  const namespace = `bench-${implementation}-${Date.now()}`;
  await client.create(builtin.namespaces, { metadata: { name: namespace } });
  teardown.add(`delete namespace ${namespace}`, () => client.delete(builtin.namespaces, namespace));
  const operator = await startOperator(implementation, {
    kubeconfigPath,
    namespace,
    workers,
    ...(values['node-flags'] === undefined
      ? {}
      : { nodeFlags: values['node-flags'].split(' ').filter(Boolean) }),
    ...(values['controller-runtime-flags'] === undefined
      ? {}
      : { controllerRuntimeFlags: values['controller-runtime-flags'].split(' ').filter(Boolean) }),
    logDir: workDir,
  });
  teardown.add(`stop the ${implementation} operator`, () => operator.process.stop());
  try {
    say(`${implementation} operator pid ${operator.process.pid} ready (${workers} workers)`);
    await sleep(1000);
    const atStart = await readProcessMemory(operator.process.pid);
    const watch = await watchConvergence(client, namespace, objects);
    teardown.add('stop the convergence watch', () => watch.stop());
    const writesBefore = await workloadWrites(client);
    const servedBefore = await workloadWriteTime(client);
    const cpuBefore = await readProcessCpuSeconds(operator.process.pid);

    const loadAtStart = loadAverage();
    say(`${implementation}: creating ${objects} Widgets in ${namespace} (load average ${loadAtStart})`);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Number(values['create-concurrency']) }, async () => {
        while (next < objects) {
          const i = next++;
          await client.create(widgets, { metadata: { name: `w-${i}`, namespace }, spec: widgetSpec(i) });
        }
      }),
    );
    say(`${implementation}: created ${objects} Widgets in ${seconds(started).toFixed(1)} s`);
    const progress = setInterval(
      () =>
        say(
          `${implementation}: ${watch.count()}/${objects} converged after ${seconds(started).toFixed(0)} s`,
        ),
      5000,
    );
    let timer: NodeJS.Timeout | undefined;
    const convergedAt = await Promise.race([
      watch.all,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `${implementation}: ${watch.count()}/${objects} converged after ${convergeTimeoutMs / 1000} s`,
              ),
            ),
          convergeTimeoutMs,
        );
      }),
    ]).finally(() => {
      clearInterval(progress);
      clearTimeout(timer);
    });
    const secondsToConverge = (convergedAt - started) / 1000;
    const loadConverged = loadAverage();
    const reconciles = await reconcilesOf(operator);
    const reconcileSecondsMean = await meanReconcileSecondsOf(operator);
    const cpuToConverge = (await readProcessCpuSeconds(operator.process.pid)) - cpuBefore;
    await watch.stop();
    say(
      `${implementation}: converged in ${secondsToConverge.toFixed(1)} s after ${reconciles} reconciles (load average ${loadConverged})`,
    );

    // Writes may trail the last status (an Event sent in the background): they belong to
    // converging, not to idling, so the idle window starts once writes have stopped.
    const writesConverged = await quietWrites(client);
    const servedConverged = await workloadWriteTime(client);
    const servedCount = servedConverged.count - servedBefore.count;
    say(
      `${implementation}: the API server's time per write, by request: ${writeTimeByRequest(servedBefore, servedConverged).join('; ')}`,
    );
    say(`${implementation}: idle for ${idleSeconds} s, counting writes`);
    await sleep(idleSeconds * 1000);
    const writesIdle = (await workloadWrites(client)) - writesConverged;
    const memory = await readProcessMemory(operator.process.pid);

    return {
      implementation,
      order,
      objects,
      workers,
      load_average_start: loadAtStart,
      load_average_converged: loadConverged,
      seconds_to_converge: Number(secondsToConverge.toFixed(2)),
      objects_per_second: Number((objects / secondsToConverge).toFixed(1)),
      reconciles,
      reconciles_per_second: Number((reconciles / secondsToConverge).toFixed(1)),
      reconcile_seconds_mean: Number(reconcileSecondsMean.toFixed(4)),
      operator_writes_to_converge: writesConverged - writesBefore - objects,
      apiserver_ms_per_write: Number(
        (servedCount > 0
          ? ((servedConverged.seconds - servedBefore.seconds) * 1000) / servedCount
          : 0
        ).toFixed(2),
      ),
      idle_writes_per_minute: Number(((writesIdle * 60) / idleSeconds).toFixed(1)),
      cpu_seconds_to_converge: Number(cpuToConverge.toFixed(2)), // /proc counts 10 ms ticks
      rss_start_mb: mb(atStart.rssBytes),
      peak_rss_start_mb: mb(atStart.peakRssBytes),
      rss_mb: mb(memory.rssBytes),
      peak_rss_mb: mb(memory.peakRssBytes),
      rss_anonymous_mb: mb(memory.anonymousBytes),
      rss_file_mb: mb(memory.fileBytes),
    };
  } finally {
    await operator.process.stop();
    // The next implementation starts from an empty store: no garbage collector runs here.
    for (const type of [widgets, builtin.configMaps, builtin.coreEvents]) {
      await deleteAll(client, type, namespace).catch((error: unknown) =>
        say(`cleanup of ${namespace}: ${String(error)}`),
      );
    }
  }
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:reconcile');
try {
  const workDir = await mkdtemp(join(tmpdir(), 'homeostat-bench-reconcile-'));
  teardown.add('remove the working directory', () => rm(workDir, { recursive: true, force: true }));
  say(`operator logs in ${workDir}`);
  let kubeconfigPath = values.kubeconfig;
  if (!kubeconfigPath) {
    const started = performance.now();
    const controlPlane = await startControlPlane();
    teardown.add('stop the control plane', () => controlPlane.stop());
    kubeconfigPath = controlPlane.kubeconfigPath;
    const pids = controlPlane.processes().map((p) => p.pid);
    say(
      `control plane ${controlPlane.version} (pids ${pids.join(', ')}, in ${controlPlane.workDir}) ready in ${seconds(started).toFixed(1)} s`,
    );
  }
  const { kubeConfig, client } = driverClient(kubeconfigPath);
  teardown.add('close the driver client', () => client.close());
  await installCrds(kubeConfig, [widgetCrd]);
  say(`warming the control plane up: the driver writes the workload of ${warmUpObjects} Widgets`);
  const warmUpStarted = performance.now();
  await warmUpControlPlane(client, warmUpObjects, Number(values['create-concurrency']));
  say(`warm-up done in ${seconds(warmUpStarted).toFixed(1)} s (load average ${loadAverage()})`);

  // Each round runs every chosen implementation once, in its order; with --orders both the second
  // round reverses the first (A B B A): on a shared machine the load and the control plane's state
  // change from one run to the next, so a figure from one order alone says who went first.
  const rounds = values.orders === 'both' && chosen.length > 1 ? [chosen, [...chosen].reverse()] : [chosen];
  const results: RunResult[] = [];
  const roundRatios: Ratios[] = [];
  for (const round of rounds) {
    const order = round.join(',');
    const inRound: RunResult[] = [];
    for (const implementation of round) {
      inRound.push(await runOne(implementation, order, client, kubeconfigPath, workDir, teardown));
    }
    results.push(...inRound);
    // TypeScript over controller-runtime, whichever ran first.
    const typescript = inRound.find((r) => r.implementation === 'typescript');
    const go = inRound.find((r) => r.implementation === 'controller-runtime');
    const ratio = typescript && go ? ratios(typescript, go) : undefined;
    if (ratio) roundRatios.push(ratio);
    say(`${objects} Widgets, ${workers} workers each, order ${order}\n${table(inRound, ratio)}`);
  }
  for (const result of results) process.stdout.write(`${JSON.stringify(result)}\n`);
  for (const ratio of roundRatios) process.stdout.write(`${JSON.stringify(ratio)}\n`);
  if (roundRatios.length > 1) process.stdout.write(`${JSON.stringify(bothOrders(roundRatios))}\n`);
} finally {
  await teardown.run();
}

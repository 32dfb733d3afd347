// `kubectl homeostat report [TYPE/]NAME`: a support bundle (a .tar.gz) with what a maintainer asks
// for first: the resource, its backups, the pods, claims, Services and budgets that belong to it,
// the Events about any of them, their containers' logs (and the previous run's) and the operators'
// logs. No Secret is ever read; every file is redacted (redact.ts) before it is written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findResource } from '../find-resource.ts';
import { backupKindOf } from '../kinds.ts';
import { getJson, kubectl, KubectlError, type KubectlTarget } from '../kubectl.ts';
import { redact } from '../redact.ts';
import type { Resource } from '../status-view.ts';

interface Item {
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    ownerReferences?: { uid: string }[];
  };
  spec?: { clusterName?: string; containers?: { name: string }[]; initContainers?: { name: string }[] };
  involvedObject?: { name?: string };
  regarding?: { name?: string };
}

interface ItemList {
  items: Item[];
}

/** Does `labels` match a selector of `key=value` pairs (what status.selector holds)? */
export function matchesSelector(labels: Record<string, string> | undefined, selector: string): boolean {
  const pairs = selector.split(',').filter(Boolean);
  return (
    pairs.length > 0 &&
    pairs.every((pair) => {
      const [key = '', value = ''] = pair.split('=');
      return labels?.[key.trim()] === value.trim();
    })
  );
}

async function logs(target: KubectlTarget, args: readonly string[]): Promise<string> {
  try {
    return await kubectl(target, ['logs', ...args, '--tail=5000', '--timestamps']);
  } catch (error) {
    return `(no logs: ${error instanceof KubectlError ? error.stderr.trim() : String(error)})\n`;
  }
}

export async function report(
  target: KubectlTarget,
  resourceTarget: string,
  output: string | undefined,
  now = new Date(),
): Promise<string[]> {
  const { kind, resource } = await findResource<Resource & Item>(target, resourceTarget);
  const name = resource.metadata?.name ?? resourceTarget;
  const uid = resource.metadata?.uid;
  const selector = typeof resource.status?.['selector'] === 'string' ? resource.status['selector'] : '';
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const base = `homeostat-report-${name}-${stamp}`;
  const staging = mkdtempSync(join(tmpdir(), 'homeostat-report-'));
  const root = join(staging, base);
  const files: string[] = [];
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), redact(text));
    files.push(path);
  };
  try {
    write(`${kind.kind.toLowerCase()}.json`, JSON.stringify(resource, null, 2));

    // Its backups (spec.clusterName), and what belongs to it (owned, or selected by status.selector).
    const backupKind = backupKindOf(kind);
    const backups = backupKind
      ? ((await getJson<ItemList>(target, [backupKind.resource]))?.items ?? []).filter(
          (b) => b.spec?.clusterName === name,
        )
      : [];
    if (backupKind) write('backups.json', JSON.stringify(backups, null, 2));
    const owned = (
      (await getJson<ItemList>(target, [
        'pods,persistentvolumeclaims,services,poddisruptionbudgets,deployments,replicasets',
      ])) ?? { items: [] }
    ).items.filter(
      (item) =>
        item.metadata?.ownerReferences?.some((o) => o.uid === uid) ||
        (selector !== '' && matchesSelector(item.metadata?.labels, selector)),
    );
    write('objects.json', JSON.stringify(owned, null, 2));

    const names = new Set([
      name,
      ...backups.map((b) => b.metadata?.name),
      ...owned.map((o) => o.metadata?.name),
    ]);
    const events = ((await getJson<ItemList>(target, ['events'])) ?? { items: [] }).items.filter((e) =>
      names.has(e.involvedObject?.name ?? e.regarding?.name),
    );
    write('events.json', JSON.stringify(events, null, 2));

    for (const pod of owned.filter((o) => o.kind === 'Pod')) {
      const podName = pod.metadata?.name ?? '';
      for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
        write(`logs/${podName}/${container.name}.log`, await logs(target, [podName, '-c', container.name]));
        write(
          `logs/${podName}/${container.name}.previous.log`,
          await logs(target, [podName, '-c', container.name, '--previous']),
        );
      }
    }

    // The operators, wherever they run (a namespace-scoped user may not list them: said in the bundle).
    const anyNamespace: KubectlTarget = {
      flags: target.flags.filter((f) => !f.startsWith('--namespace=')),
      namespace: undefined,
    };
    try {
      const operators =
        (
          await getJson<ItemList>(anyNamespace, [
            'pods',
            '-A',
            '-l',
            'app.kubernetes.io/part-of=homeostat,app.kubernetes.io/component=operator',
          ])
        )?.items ?? [];
      for (const pod of operators) {
        const podName = pod.metadata?.name ?? '';
        const namespace = pod.metadata?.namespace ?? '';
        write(`operators/${namespace}/${podName}.log`, await logs(anyNamespace, ['-n', namespace, podName]));
      }
    } catch (error) {
      write(
        'operators/NOT-COLLECTED.txt',
        `the operators' pods could not be listed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
    write(
      'README.txt',
      `kubectl homeostat report of ${kind.kind} ${name}, ${now.toISOString()}.\nSecrets were never read; values that look like credentials are replaced by [REDACTED].\n`,
    );

    const file = resolve(output ?? `${base}.tar.gz`);
    execFileSync('tar', ['-czf', file, '-C', staging, base]);
    return [`wrote ${file} (${files.length} files)`];
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

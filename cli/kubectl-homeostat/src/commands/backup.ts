// `kubectl homeostat backup CLUSTER`: an on-demand backup of a PostgreSQLCluster or an EtcdCluster
// (a PostgreSQLBackup or EtcdBackup named after it and the time), optionally waited for.
import { findResource } from '../find-resource.ts';
import { backupKindOf, homeostatKinds, UsageError } from '../kinds.ts';
import { getJson, kubectl, type KubectlTarget } from '../kubectl.ts';
import type { Resource } from '../status-view.ts';
import { waitFor } from '../wait.ts';

/** `<cluster>-20261127-181502`: sorts by time, within the 63 characters of a label value. */
export function backupName(cluster: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${cluster.slice(0, 63 - stamp.length - 1)}-${stamp}`;
}

export async function backup(
  target: KubectlTarget,
  clusterName: string | undefined,
  wait: { timeoutMs: number } | undefined,
  now = new Date(),
): Promise<string[]> {
  if (!clusterName) throw new UsageError('backup takes CLUSTER');
  const { kind, resource } = await findResource(target, clusterName, homeostatKinds.filter(backupKindOf));
  const backupKind = backupKindOf(kind);
  if (!backupKind) throw new UsageError(`${kind.kind} has no backups`);
  const cluster = resource.metadata?.name ?? clusterName;
  const name = backupName(cluster, now);
  const manifest = {
    apiVersion: backupKind.apiVersion,
    kind: backupKind.kind,
    metadata: { name, ...(target.namespace ? { namespace: target.namespace } : {}) },
    spec: { clusterName: cluster },
  };
  await kubectl(target, ['create', '-f', '-'], JSON.stringify(manifest));
  const lines = [`${backupKind.kind} ${name} created`];
  if (!wait) return lines;
  let finished: Resource | undefined;
  await waitFor(`${backupKind.kind} ${name} finished`, wait.timeoutMs, async () => {
    finished = await getJson<Resource>(target, [backupKind.resource, name]);
    const phase = finished?.status?.['phase'];
    if (phase === 'Failed') {
      const message = finished?.status?.['message'] ?? finished?.status?.['error'] ?? '';
      throw new Error(`${backupKind.kind} ${name} failed${message ? `: ${String(message)}` : ''}`);
    }
    return phase === 'Succeeded' ? true : `phase ${String(phase ?? 'none')}`;
  });
  lines.push(`${backupKind.kind} ${name} succeeded`);
  return lines;
}

// What a restore drill's pod says, read from its status as the kubelet reports it: still at work,
// the check's measurement, or the step that failed with why. The reasons name the step, so the
// BackupVerified condition tells a person where to look: the bucket (SnapshotMissing), the bytes
// (SnapshotCorrupt), etcdutl or the restored etcd (RestoreFailed), or the data (HashMismatch,
// decided by the operator from the measurement, see backup-drill-controller.ts).
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** The check container's termination message (restored-hash-agent.ts). */
export const RestoredHashResult = Type.Object({
  hashKV: Type.String({ pattern: '^[0-9]{1,10}$' }),
  compactRevision: Type.String({ pattern: '^-?[0-9]{1,20}$' }),
  currentRevision: Type.String({ pattern: '^[0-9]{1,20}$' }),
  answeredAt: Type.String(),
});

export type DrillOutcome =
  | { readonly kind: 'running' }
  | { readonly kind: 'answered'; readonly result: Static<typeof RestoredHashResult> }
  | { readonly kind: 'failed'; readonly reason: string; readonly message: string };

const messageOf = (status: V1ContainerStatus): string => {
  const terminated = status.state?.terminated;
  // The tail: a log's last lines say why; the condition's message stays readable.
  return (terminated?.message ?? terminated?.reason ?? `exit code ${terminated?.exitCode ?? '?'}`)
    .trim()
    .slice(-2000);
};

/** Why fetching the snapshot failed, by what the fetch step said. */
function fetchReason(message: string): string {
  if (/NoSuchKey|NotFound|HTTP 404|ENOENT/.test(message)) return 'SnapshotMissing';
  if (/sha256|trailer|SnapshotHashMismatch|SnapshotMalformed/i.test(message)) return 'SnapshotCorrupt';
  return 'SnapshotUnreadable';
}

/** What the drill pod says now. */
export function drillOutcome(pod: V1Pod): DrillOutcome {
  const status = pod.status;
  for (const init of status?.initContainerStatuses ?? []) {
    const terminated = init.state?.terminated;
    if (!terminated || terminated.exitCode === 0) continue;
    // A failed step's log ends with why, in one line (main.ts); the stack above it is for the log.
    const lines = messageOf(init)
      .split('\n')
      .filter((l) => l.trim() !== '');
    const message = `${init.name}: ${lines.at(-1) ?? ''}`;
    const fetching = init.name === 'fetch-backup' || init.name === 'copy-backup';
    return { kind: 'failed', reason: fetching ? fetchReason(message) : 'RestoreFailed', message };
  }
  const containers = status?.containerStatuses ?? [];
  const check = containers.find((c) => c.name === 'check');
  const checked = check?.state?.terminated;
  if (check && checked) {
    const message = messageOf(check);
    if (checked.exitCode === 0) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        parsed = undefined;
      }
      if (Value.Check(RestoredHashResult, parsed)) return { kind: 'answered', result: parsed };
      return { kind: 'failed', reason: 'RestoreFailed', message: `check: unreadable result: ${message}` };
    }
    // A revision compacted away in the copy cannot be hashed: the backup is not shown wrong.
    const reason = /compacted/.test(message) ? 'HashNotComparable' : 'RestoreFailed';
    return { kind: 'failed', reason, message: `check: ${message}` };
  }
  const etcd = containers.find((c) => c.name === 'etcd');
  if (etcd?.state?.terminated) {
    return { kind: 'failed', reason: 'RestoreFailed', message: `restored etcd exited: ${messageOf(etcd)}` };
  }
  if (status?.phase === 'Failed') {
    return {
      kind: 'failed',
      reason: 'RestoreFailed',
      message: `pod failed: ${status.message ?? status.reason ?? 'no reason given'}`,
    };
  }
  return { kind: 'running' };
}

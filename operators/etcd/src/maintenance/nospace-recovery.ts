import { AlarmType } from 'etcd3';
import type { EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { askAnyEndpoint, readClusterHealth } from '../health/cluster-health.ts';
import { defragmentMembers, type DefragmentResult } from './defragment.ts';

/** What a NOSPACE recovery did. */
export interface NoSpaceRecovery {
  /** False when no NOSPACE alarm was raised (nothing done). */
  readonly recovered: boolean;
  readonly compactedAtRevision: string | undefined;
  readonly defragmented: readonly DefragmentResult[];
  readonly disarmedMembers: readonly string[];
}

const isNoSpace = (alarm: string) => alarm.toUpperCase() === 'NOSPACE';

/**
 * Brings a cluster with the NOSPACE alarm back to writable, in etcd's documented order: compact the
 * history up to the current revision, defragment each member (one at a time) so the freed pages go
 * back to the file system, then disarm the alarm. Without the first two steps the alarm comes back
 * at the next write.
 */
export async function recoverFromNoSpace(connection: EtcdConnection): Promise<NoSpaceRecovery> {
  const step = 'recover from NOSPACE';
  const health = await readClusterHealth(connection);
  const raised = health.alarms.filter((a) => isNoSpace(a.alarm));
  if (raised.length === 0) {
    return { recovered: false, compactedAtRevision: undefined, defragmented: [], disarmedMembers: [] };
  }
  try {
    const revision = await askAnyEndpoint(connection, step, async (client) => {
      const range = await client.kv.range({ key: Buffer.from('\0'), keys_only: true, limit: 1 });
      return range.header.revision;
    });
    await askAnyEndpoint(connection, step, async (client) => {
      try {
        await client.kv.compact({ revision, physical: true });
      } catch (error) {
        // Already compacted at this revision (a retry after a crash): that is the state we want.
        if (!/required revision has been compacted/i.test(messageOf(error))) throw error;
      }
    });
    const defragmented = await defragmentMembers(connection);
    for (const alarm of raised) {
      await askAnyEndpoint(connection, step, (client) =>
        client.maintenance.alarm({
          action: 'Deactivate',
          memberID: alarm.memberId,
          alarm: AlarmType.Nospace,
        }),
      );
    }
    return {
      recovered: true,
      compactedAtRevision: revision,
      defragmented,
      disarmedMembers: raised.map((a) => a.memberId),
    };
  } catch (error) {
    if (error instanceof EtcdEngineError) throw error;
    throw new EtcdEngineError(step, 'MaintenanceFailed', messageOf(error), { cause: error });
  }
}

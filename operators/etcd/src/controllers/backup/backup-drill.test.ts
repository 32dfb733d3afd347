// The decisions of a restore drill that need no API server: when one is due, what its pod's status
// says, and the verdict on what it measured against what the backup recorded.
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { drillDue, judgeDrill, newestBackupOf, verifyBackupAnnotation } from './backup-drill-controller.ts';
import { drillOutcome } from './drill-outcome.ts';

const cluster = (over: {
  schedule?: string;
  request?: string;
  status?: EtcdCluster['status'];
}): EtcdCluster => ({
  metadata: {
    name: 'orders',
    namespace: 'prod',
    uid: 'u-1',
    creationTimestamp: new Date('2026-11-01T00:00:00Z'),
    ...(over.request ? { annotations: { [verifyBackupAnnotation]: over.request } } : {}),
  },
  spec: {
    backup: {
      keep: 7,
      destination: {
        s3: { bucket: 'b', region: 'us-east-1', forcePathStyle: false, credentialsSecretName: 's' },
      },
      ...(over.schedule ? { verify: { schedule: over.schedule, timeoutSeconds: 1800 } } : {}),
    },
  } as EtcdCluster['spec'],
  ...(over.status ? { status: over.status } : {}),
});

const backup = (name: string, finishedAt: string, status: Partial<NonNullable<EtcdBackup['status']>> = {}) =>
  ({
    metadata: { name, namespace: 'prod' },
    spec: { clusterName: 'orders' },
    status: {
      phase: 'Succeeded',
      finishedAt,
      revision: '201',
      hashKV: '42',
      compactRevision: '-1',
      clusterUid: 'u-1',
      ...status,
    },
  }) as EtcdBackup;

const terminated = (name: string, exitCode: number, message: string) => ({
  name,
  image: '',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, message } },
});

describe('drillDue', () => {
  const now = new Date('2026-11-27T03:31:00Z');
  it('is due once per cron time, counted from the last drill', () => {
    expect(drillDue(cluster({ schedule: '30 3 * * *' }), now).due).toBe(true);
    const ran = cluster({ schedule: '30 3 * * *', status: { lastBackupDrillTime: '2026-11-27T03:30:01Z' } });
    expect(drillDue(ran, now)).toMatchObject({ due: false, nextAt: new Date('2026-11-28T03:30:00Z') });
  });
  it('is due on a new request value, once', () => {
    expect(drillDue(cluster({ request: 'a' }), now).due).toBe(true);
    expect(drillDue(cluster({ request: 'a', status: { lastBackupDrillRequest: 'a' } }), now).due).toBe(false);
    expect(drillDue(cluster({}), now).due).toBe(false);
  });
  it('says why a schedule cannot be read', () => {
    expect(drillDue(cluster({ schedule: '61 * * * *' }), now).invalid).toBeTruthy();
  });
});

describe('newestBackupOf', () => {
  it('takes the newest Succeeded backup of this very cluster', () => {
    const backups = [
      backup('old', '2026-11-26T00:00:00Z'),
      backup('newest', '2026-11-27T00:00:00Z'),
      backup('failed', '2026-11-27T01:00:00Z', { phase: 'Failed' }),
      backup('earlier-cluster', '2026-11-27T02:00:00Z', { clusterUid: 'u-0' }),
    ];
    expect(newestBackupOf(cluster({}), backups)?.metadata?.name).toBe('newest');
  });
});

describe('drillOutcome', () => {
  const pod = (status: NonNullable<V1Pod['status']>): V1Pod => ({
    metadata: { name: 'etcd-drill-x' },
    status,
  });
  it('names the step that failed and why', () => {
    const missing = drillOutcome(
      pod({
        phase: 'Failed',
        initContainerStatuses: [
          terminated(
            'fetch-backup',
            1,
            'at stack\nfetch-backup failed: S3 GetObject s3://b/k failed: NoSuchKey (HTTP 404)',
          ),
        ],
      }),
    );
    expect(missing).toEqual({
      kind: 'failed',
      reason: 'SnapshotMissing',
      message: 'fetch-backup: fetch-backup failed: S3 GetObject s3://b/k failed: NoSuchKey (HTTP 404)',
    });
    const corrupt = drillOutcome(
      pod({
        initContainerStatuses: [
          terminated('fetch-backup', 1, 'x: its sha256 is 00, but the backup record says 11'),
        ],
      }),
    );
    expect(corrupt).toMatchObject({ reason: 'SnapshotCorrupt' });
    const restore = drillOutcome(pod({ initContainerStatuses: [terminated('restore', 1, 'etcdutl: bad')] }));
    expect(restore).toMatchObject({ reason: 'RestoreFailed' });
  });
  it('reads the check’s measurement, and is running until there is one', () => {
    expect(drillOutcome(pod({ phase: 'Running' }))).toEqual({ kind: 'running' });
    const result = {
      hashKV: '42',
      compactRevision: '-1',
      currentRevision: '230',
      answeredAt: '2026-11-27T03:30:05Z',
    };
    expect(
      drillOutcome(
        pod({ phase: 'Running', containerStatuses: [terminated('check', 0, JSON.stringify(result))] }),
      ),
    ).toEqual({ kind: 'answered', result });
  });
});

describe('judgeDrill', () => {
  const started = new Date('2026-11-27T03:30:00Z');
  const answered = (hashKV: string, compactRevision = '-1') =>
    ({
      kind: 'answered',
      result: { hashKV, compactRevision, currentRevision: '230', answeredAt: '2026-11-27T03:30:04.5Z' },
    }) as const;
  const taken = backup('nightly', '2026-11-27T03:00:00Z');
  it('proves a backup whose restored HashKV equals the recorded one, with the measured RTO and RPO', () => {
    const verdict = judgeDrill(taken, 'nightly', answered('42'), started);
    expect(verdict).toMatchObject({
      verified: true,
      record: {
        backup: 'nightly',
        revision: '201',
        hashKV: '42',
        restoreSeconds: 4.5,
        recoveryPointSeconds: 1800,
      },
    });
  });
  it('refuses a different hash, a different compaction, or no hash at all', () => {
    expect(judgeDrill(taken, 'nightly', answered('43'), started)).toMatchObject({
      verified: false,
      reason: 'HashMismatch',
    });
    expect(judgeDrill(taken, 'nightly', answered('42', '150'), started)).toMatchObject({
      reason: 'HashNotComparable',
    });
    const unhashed = backup('old', '2026-11-27T03:00:00Z');
    delete unhashed.status?.hashKV;
    expect(judgeDrill(unhashed, 'old', answered('42'), started)).toMatchObject({ reason: 'HashNotRecorded' });
  });
});

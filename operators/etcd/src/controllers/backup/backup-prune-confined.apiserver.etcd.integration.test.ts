// Retention of scheduled backups in a claim when a backup's status lies about where its file is,
// every side real: a real kube-apiserver, real etcd members and the operator image's agent for the
// short-lived pods (MemberPodRunner). A status pointed at a file in a member's claim, or out of the
// backup directory with "..", deletes nothing: the file stays, the EtcdBackup stays, no pod is made,
// and a Warning Event says why. A backup a restore drill is restoring (its pod held unstarted, as a
// slow drill would be) is kept past keep until the drill has recorded its verdict, then deleted.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { etcdBackups } from '../../api/etcd-backup-types.ts';
import { etcdClusters } from '../../api/etcd-cluster-types.ts';
import { waitForVoters } from '../../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../../test-support/etcd-cluster-fixtures.ts';
import { useOperatorTestBed } from '../../test-support/operator-test-bed.ts';
import { ScheduleClock } from '../../test-support/schedule-clock.ts';
import { addBackupDrillController, verifyBackupAnnotation } from './backup-drill-controller.ts';
import { addBackupScheduleController } from './backup-schedule-controller.ts';
import { scheduledLabel } from './backup-names.ts';
import { claimPrunePodName } from './claim-prune.ts';
import { drillBackupAnnotation, drillLabel } from './drill-pod.ts';

const clock = new ScheduleClock();
const bed = useOperatorTestBed({
  label: 'prune-confined',
  backups: true,
  addControllers: (m) => {
    addBackupScheduleController(m, { now: clock.now, pruneIntervalMs: 300 });
    addBackupDrillController(m, { followIntervalMs: 500 });
  },
});
const { client, namespace, poll } = bed;
const name = 'keeper';

describe('retention confined to the backup’s own file, real etcd members, on a real kube-apiserver', () => {
  const nextScheduledRun = (run: number) => clock.nextRun(client, namespace, name, run, poll);
  const refusalAbout = async (backup: string) =>
    (await eventsAbout(client, namespace, name, 'BackupPruneRefused')).find((e) =>
      e.note?.includes(`scheduled backup ${backup}:`),
    );
  const exists = (path: string) =>
    stat(path).then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    await client.create(builtin.persistentVolumeClaims, {
      metadata: { name: 'keeper-backups', namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await createEtcdCluster(client, name, namespace, {
      size: 1,
      backup: {
        schedule: '*/5 * * * *',
        keep: 1,
        destination: { persistentVolumeClaim: { claimName: 'keeper-backups', directory: 'etcd' } },
      },
    });
    await waitForVoters(client, namespace, name, 1, poll);
  });

  it('refuses to delete a file its status points at in a member’s claim, or out of the directory', async () => {
    // A file in the member's own claim, next to its data, that a forged status names.
    const memberVolume = bed.runner.volumeDir(`${name}-0-data`);
    const victim = join(memberVolume, 'victim.db');
    await writeFile(victim, 'member data');
    const first = await nextScheduledRun(1);
    const firstFile = join(bed.runner.volumeDir('keeper-backups'), 'etcd', first.status?.key ?? '?');
    expect(await exists(firstFile)).toBe(true);
    await client.patchStatus(etcdBackups, first.metadata?.name ?? '', namespace, {
      location: `pvc://${name}-0-data/victim.db`,
      key: 'victim.db',
    });

    const second = await nextScheduledRun(2);
    await waitUntil(
      `${first.metadata?.name ?? ''} refused or pruned`,
      async () =>
        (await refusalAbout(first.metadata?.name ?? '')) !== undefined ||
        (await client.find(etcdBackups, first.metadata?.name ?? '', namespace)) === undefined,
      poll,
    );
    // Nothing was deleted: the member's file, the backup's own file, the EtcdBackup; no pod was made.
    expect(await readFile(victim, 'utf8')).toBe('member data');
    const refused = await refusalAbout(first.metadata?.name ?? '');
    expect(refused?.type).toBe('Warning');
    expect(refused?.note).toContain(`pvc://${name}-0-data/victim.db`);
    expect(refused?.note).toContain('nothing deleted');
    expect(await exists(firstFile)).toBe(true);
    expect(await client.find(etcdBackups, first.metadata?.name ?? '', namespace)).toBeDefined();
    expect(await client.find(builtin.pods, claimPrunePodName(first), namespace)).toBeUndefined();

    // The same with a path that climbs out of the backup directory into the member's claim.
    const secondFile = join(bed.runner.volumeDir('keeper-backups'), 'etcd', second.status?.key ?? '?');
    await client.patchStatus(etcdBackups, second.metadata?.name ?? '', namespace, {
      location: `pvc://keeper-backups/etcd/../../${name}-0-data/victim.db`,
      key: `../../${name}-0-data/victim.db`,
    });
    await nextScheduledRun(3);
    await waitUntil(
      `a BackupPruneRefused Warning about ${second.metadata?.name ?? ''}`,
      async () => (await refusalAbout(second.metadata?.name ?? '')) !== undefined,
      poll,
    );
    expect((await refusalAbout(second.metadata?.name ?? ''))?.note).toContain('../../');
    expect(await readFile(victim, 'utf8')).toBe('member data');
    expect(await exists(secondFile)).toBe(true);
    expect(await client.find(builtin.pods, claimPrunePodName(second), namespace)).toBeUndefined();
    expect(await eventsAbout(client, namespace, name, 'BackupPruneFailed')).toEqual([]);
    expect(await eventsAbout(client, namespace, name, 'BackupPruned')).toEqual([]);
  });

  it('keeps a backup a restore drill is restoring past keep until the drill has recorded its verdict, then deletes it', async () => {
    bed.runner.drills.held = true;
    await client.patch(etcdClusters, name, namespace, {
      metadata: { annotations: { [verifyBackupAnnotation]: 'during-retention' } },
    });
    const liveDrillPods = async () =>
      (await client.list(builtin.pods, { namespace, labelSelector: drillLabel })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
    let drilled = '';
    await waitUntil(
      'a drill pod, held unstarted',
      async () => {
        drilled = (await liveDrillPods())[0]?.metadata?.annotations?.[drillBackupAnnotation] ?? '';
        return drilled !== '';
      },
      poll,
    );
    const drilledBackup = await client.get(etcdBackups, drilled, namespace);
    expect(drilledBackup.metadata?.labels?.[scheduledLabel]).toBe('true');
    const drilledFile = join(
      bed.runner.volumeDir('keeper-backups'),
      'etcd',
      drilledBackup.status?.key ?? '?',
    );
    expect(await exists(drilledFile)).toBe(true);

    // keep 1: the next scheduled backup puts the drilled one beyond it.
    await nextScheduledRun(4);
    const deferred = async () =>
      (await eventsAbout(client, namespace, name, 'BackupPruneDeferred')).some((e) =>
        e.note?.includes(`scheduled backup ${drilled} `),
      );
    await waitUntil(
      `${drilled} deferred or deleted`,
      async () => (await deferred()) || (await client.find(etcdBackups, drilled, namespace)) === undefined,
      poll,
    );
    expect(await client.find(etcdBackups, drilled, namespace), 'deleted under a running drill').toBeDefined();
    expect(await exists(drilledFile)).toBe(true);
    expect(await client.find(builtin.pods, claimPrunePodName(drilledBackup), namespace)).toBeUndefined();

    // The drill runs on the backup still there, records its verdict, and its end lets retention go on.
    bed.runner.drills.held = false;
    await waitUntil(
      `${drilled} deleted once its drill ended`,
      async () => (await client.find(etcdBackups, drilled, namespace)) === undefined,
      poll,
    );
    const cluster = await client.get(etcdClusters, name, namespace);
    expect(conditionOf(cluster, 'BackupVerified'), JSON.stringify(cluster.status)).toMatchObject({
      status: 'True',
      reason: 'BackupRestored',
    });
    expect(cluster.status?.lastVerifiedBackup?.backup).toBe(drilled);
    expect(await exists(drilledFile)).toBe(false);
    expect(await liveDrillPods()).toEqual([]);
    expect(
      (await eventsAbout(client, namespace, name, 'BackupPruned')).some((e) =>
        e.note?.includes(`scheduled backup ${drilled} `),
      ),
    ).toBe(true);
  });
});

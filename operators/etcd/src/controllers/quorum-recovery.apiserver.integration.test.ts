// The disaster recovery's decisions when the operator's cache lags its own status writes, against a
// real kube-apiserver + etcd (no member runs: quorum is lost from the start). The EtcdCluster given
// to each decision is the one read before the first status write, as a cache that has not seen
// the writes since would give it: each step must still be taken, and its Event emitted, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { EventRecorder, KubeClient, Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import {
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
} from '../test-support/etcd-cluster-fixtures.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import { operatorName } from './cluster-names.ts';
import { OwnedObjects } from './owned-objects.ts';
import { RefusedBackups, superviseQuorum, type RecoveryDecision } from './quorum-recovery.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-recovery-stale-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-operator' });
const name = 'stale';
/** A cluster whose majority comes back while the cache still shows no recovery. */
const back = 'back';

describe('disaster recovery steps decided from a stale EtcdCluster, on a real kube-apiserver', () => {
  const { log } = memoryLogger();
  const events = new EventRecorder(client, operatorName, 'test', log);
  // Only for the recorder of owned objects the decisions take (nothing is started or read here).
  const manager = new Manager({ kubeConfig, name: operatorName, namespaces: [namespace], logger: log });
  const refused = new RefusedBackups();

  const decide = (
    cluster: EtcdCluster,
    now: Date,
    seen: { health?: ClusterHealth; openAsWritten?: boolean } = {},
  ): Promise<RecoveryDecision> =>
    superviseQuorum({
      cluster,
      deps: {
        cluster,
        client,
        events,
        owned: new OwnedObjects(manager),
        addressing: loopbackAddressing(),
        image: '',
      },
      events,
      health: seen.health,
      ...(seen.openAsWritten === undefined ? {} : { openAsWritten: seen.openAsWritten }),
      backups: [],
      seedFrom: () => Promise.reject(new Error('no restore expected: there is no backup')),
      operatorImage: 'example.test/etcd-operator:test',
      refused,
      now,
    });
  // What the controller does with a decision: write status.recovery.
  const write = async (decision: RecoveryDecision, cluster = name) => {
    await client.patchStatus(etcdClusters, cluster, namespace, { recovery: decision.status });
  };

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    await createEtcdCluster(client, name, namespace, {
      size: 3,
      recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds: 10 },
    });
    // A cluster that existed (it has an ID) and of which no member answers now.
    await client.patchStatus(etcdClusters, name, namespace, { clusterId: 'c0ffee', phase: 'Running' });
    await createEtcdCluster(client, back, namespace, {
      size: 3,
      recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds: 10 },
    });
    await client.patchStatus(etcdClusters, back, namespace, { clusterId: 'beef', phase: 'Running' });
  });

  afterAll(async () => {
    await events.flush();
    client.close();
  });

  it('schedules the restore once and fails for want of a backup once, whatever the cache shows', async () => {
    const stale = await client.get(etcdClusters, name, namespace);
    const lostAt = new Date();
    const at = (seconds: number) => new Date(lostAt.getTime() + seconds * 1000);

    const scheduled = await decide(stale, lostAt);
    expect(scheduled.status).toMatchObject({ phase: 'Waiting', quorumLostAt: lostAt.toISOString() });
    await write(scheduled);
    // The cache has not seen that write: the wait goes on from when quorum was first seen lost.
    const again = await decide(stale, at(1));
    expect(again.status).toEqual(scheduled.status);
    expect(again.seen?.status?.recovery).toEqual(scheduled.status);

    const failed = await decide(stale, at(11));
    expect(failed.status).toMatchObject({ phase: 'Failed', quorumLostAt: lostAt.toISOString() });
    expect(failed.problem?.reason).toBe('NoUsableBackup');
    await write(failed);
    const stillFailed = await decide(stale, at(12));
    expect(stillFailed.status).toMatchObject({ phase: 'Failed', quorumLostAt: lostAt.toISOString() });

    await events.flush();
    for (const reason of ['RecoveryScheduled', 'NoUsableBackup']) {
      const emitted = await eventsAbout(client, namespace, name, reason);
      expect(emitted.map((e) => ({ reason: e.reason, series: e.series }))).toEqual([
        { reason, series: undefined },
      ]);
    }
  });
  it('ends a recovery it opened when quorum is back, though its cache never showed the recovery', async () => {
    const stale = await client.get(etcdClusters, back, namespace);
    const lostAt = new Date();
    const scheduled = await decide(stale, lostAt);
    expect(scheduled.status).toMatchObject({ phase: 'Waiting' });
    await write(scheduled, back);
    // A majority answers a moment later, and the cache still shows the cluster as before the write.
    const majority: ClusterHealth = {
      members: [],
      votingMembers: 3,
      healthyVoters: 3,
      quorum: 2,
      hasQuorum: true,
      leader: undefined,
      learners: [],
      alarms: [],
      state: 'Healthy',
      linearizableList: true,
      clusterId: 'beef',
      clusterVersion: '3.7.0',
    };
    const over = await decide(stale, new Date(lostAt.getTime() + 2000), {
      health: majority,
      openAsWritten: true,
    });
    expect(over.status).toMatchObject({ phase: 'Cancelled' });
    await events.flush();
    expect((await eventsAbout(client, namespace, back, 'RecoveryCancelled')).length).toBe(1);
  });
});

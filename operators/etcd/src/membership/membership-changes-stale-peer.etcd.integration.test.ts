import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { consistently, freeLoopbackPort, waitUntil } from '@homeostat/testing';
import {
  allocateEtcdMember,
  initialClusterOf,
  startEtcdMember,
  type EtcdJoin,
  type EtcdMemberAddress,
  type RunningEtcdMember,
} from '@homeostat/testing/etcd';
import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError } from '../errors.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { memberIdHex } from '../member-id.ts';
import { must } from '../test-support/must.ts';
import { retryWhileTransient } from '../test-support/retry-while-transient.ts';
import { startRaftPeerProxy, type RaftPeerProxy } from '../test-support/raft-peer-proxy.ts';
import { addLearner } from './membership-changes.ts';

// The fault (docs/etcd/failure-modes.md, "A voter the leader wrongly thinks is disconnected"): a
// member's streams are back, but a pipeline send to it that was sent while they were down fails
// afterwards; rafthttp marks the peer inactive and, as nothing but a new stream connection marks it
// active again, the leader refuses every member add as "unhealthy cluster" for good.

let members: RunningEtcdMember[] = [];
let proxy: RaftPeerProxy | undefined;
let workDir: string | undefined;

afterEach(async () => {
  await Promise.all(members.map((m) => m.process.stop(2000)));
  members = [];
  await proxy?.close();
  proxy = undefined;
  if (workDir) await rm(workDir, { recursive: true, force: true });
  workDir = undefined;
});

/** The leader's own view of `peer` (rafthttp's peer status): etcd_network_active_peers on its /metrics. */
async function peerActiveOn(clientUrl: string, localId: string, peerId: string): Promise<boolean> {
  const response = await fetch(`${clientUrl}/metrics`);
  const text = await response.text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(
        `etcd_network_active_peers{Local="${memberIdHex(localId)}",Remote="${memberIdHex(peerId)}"}`,
      ),
    );
  if (!line) throw new Error(`no etcd_network_active_peers line for ${memberIdHex(peerId)} on ${clientUrl}`);
  return line.trim().endsWith(' 1');
}

async function idsByName(connection: EtcdConnection): Promise<Map<string, string>> {
  const health = await readClusterHealth(connection);
  return new Map(health.members.map((m) => [m.member.name, m.member.id]));
}

async function leaderOf(connection: EtcdConnection): Promise<string | undefined> {
  return (await readClusterHealth(connection)).leader?.member.id;
}

describe('membership changes on three real etcd processes, one behind a raft-aware TCP proxy', () => {
  it('adds a learner although the leader marked a voter inactive after its streams had come back', async () => {
    workDir = await mkdtemp(joinPath(tmpdir(), 'homeostat-stale-peer-'));
    const dir = workDir;
    const [a, b, x] = (await Promise.all(
      ['etcd-0', 'etcd-1', 'etcd-2'].map((name) => allocateEtcdMember(dir, name)),
    )) as [EtcdMemberAddress, EtcdMemberAddress, EtcdMemberAddress];
    const peerProxy = await startRaftPeerProxy(Number(new URL(x.peerUrl).port));
    proxy = peerProxy;
    // etcd-2 listens on its own port but its peers reach it only through the proxy.
    const join: EtcdJoin = {
      initialCluster: initialClusterOf([a, b, { ...x, peerUrl: peerProxy.url }]),
      initialClusterState: 'new',
      initialClusterToken: `stale-peer-${Date.now().toString(36)}`,
    };
    const xOptions = { extraFlags: [`--initial-advertise-peer-urls=${peerProxy.url}`] };
    members = await Promise.all([
      startEtcdMember(a, join),
      startEtcdMember(b, join),
      startEtcdMember(x, join, xOptions),
    ]);
    const connection: EtcdConnection = { endpoints: [a, b, x].map((m) => m.clientUrl) };
    const ids = await idsByName(connection);
    const xId = must(ids.get('etcd-2'), 'etcd-2 ID');
    const aId = must(ids.get('etcd-0'), 'etcd-0 ID');

    // The scenario needs a leader other than the member behind the proxy.
    if ((await leaderOf(connection)) === xId) {
      await withMemberClient(connection, x.clientUrl, (c) => c.maintenance.moveLeader({ targetID: aId }));
    }
    await waitUntil(
      'a leader other than etcd-2',
      async () => ![undefined, xId].includes(await leaderOf(connection)),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    const leaderId = must(await leaderOf(connection), 'leader ID');
    const leader = must(
      [a, b].find((m) => ids.get(m.name) === leaderId),
      'leader address',
    );
    const xActiveOnLeader = () => peerActiveOn(leader.clientUrl, leaderId, xId);
    await waitUntil('the leader sees etcd-2 active', xActiveOnLeader, { timeoutMs: 20_000, intervalMs: 200 });

    // 1. etcd-2 goes away: its streams break, the leader falls back to pipeline POSTs, and the
    //    proxy holds those open unanswered, as a route to the pod's old IP would.
    peerProxy.holdAllButStreams();
    const xIndex = members.findIndex((m) => m.name === 'etcd-2');
    await must(members[xIndex], 'etcd-2 process').process.stop(0);
    await waitUntil('the leader sees etcd-2 inactive', async () => !(await xActiveOnLeader()), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    await waitUntil(
      'a pipeline send from the leader held by the proxy',
      async () => peerProxy.held().some((l) => l.startsWith('POST /raft ')),
      { timeoutMs: 20_000, intervalMs: 100 },
    );

    // 2. etcd-2 comes back (same data, "new IP"): its streams reconnect, the leader marks it active.
    members[xIndex] = await startEtcdMember(x, join, xOptions);
    await waitUntil('the leader sees etcd-2 active again', xActiveOnLeader, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect(peerProxy.held().some((l) => l.startsWith('POST /raft '))).toBe(true);

    // 3. The old pipeline sends fail now, after the streams are up: the leader marks etcd-2
    //    inactive, and nothing marks it active again while its streams stay up.
    peerProxy.failHeld();
    await waitUntil('the leader marks etcd-2 inactive', async () => !(await xActiveOnLeader()), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    // Past etcd's HealthInterval (5 s), a merely recent reconnection would no longer be refused.
    await consistently('etcd-2 stays inactive in the leader view', async () => !(await xActiveOnLeader()), {
      forMs: 6_000,
      intervalMs: 250,
    });
    const health = await readClusterHealth(connection);
    expect(health.healthyVoters).toBe(3);
    expect(health.leader?.member.id).toBe(leaderId);
    const probeUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    await expect(
      withMemberClient(connection, leader.clientUrl, (c) =>
        c.cluster.memberAdd({ peerURLs: [probeUrl], isLearner: true }),
      ),
    ).rejects.toThrow(/unhealthy cluster/);

    // 4. The operator's add gets through (before the fix: refused as ClusterSettling until it gave up).
    const peerUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const refusals: string[] = [];
    const recordRefusal = (error: unknown): never => {
      if (error instanceof EtcdEngineError) refusals.push(error.message);
      throw error;
    };
    const result = await retryWhileTransient(() => addLearner(connection, peerUrl).catch(recordRefusal), {
      timeoutMs: 40_000,
      intervalMs: 500,
    }).catch((error: unknown) => {
      if (error instanceof EtcdEngineError)
        throw new Error(`addLearner stayed refused: ${error.message}`, { cause: error });
      throw error;
    });
    expect(result.added).toBe(true);
    expect(result.member.isLearner).toBe(true);
    // The refusal that moved leadership says so (the reconcile reports it as Waiting).
    expect(refusals.some((m) => /leadership moved to/.test(m))).toBe(true);
    // Leadership moved; the old leader's view of etcd-2 is as stale as before.
    expect(await leaderOf(connection)).not.toBe(leaderId);
    expect(await xActiveOnLeader()).toBe(false);
  });
});

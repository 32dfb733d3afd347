// Several managers compete for one Lease on a real kube-apiserver + etcd (shared by this project's tests).
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { startTcpProxy } from '@homeostat/testing';
import { sharedKubeConfig, sharedKubeconfigPath } from '@homeostat/testing/shared';
import { clusterAccess, type ClusterAccess } from '../client/cluster-access.ts';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import { Manager } from './manager.ts';
import { memoryLogger } from '../testing/memory-logger.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `leases-${process.pid}`;
const timing = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 };
const client = new KubeClient(kubeConfig, { fieldManager: 'test' });

function contender(leaseName: string, identity: string): Manager {
  return new Manager({
    kubeConfig,
    name: 'leader-test',
    logger: memoryLogger().log,
    leaderElection: { namespace, leaseName, identity, ...timing },
  });
}

const holder = async (leaseName: string) =>
  (await client.get(builtin.leases, leaseName, namespace)).spec?.holderIdentity ?? null;

describe('leader election on a real kube-apiserver + etcd', () => {
  beforeAll(async () => {
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });
  afterAll(() => client.close());

  it('lets only one of two managers lead; a stopped leader releases the lease and the other takes over', async () => {
    const a = contender('pair', 'a');
    const b = contender('pair', 'b');
    await Promise.all([a.start(), b.start()]);
    await Promise.race([a.elected, b.elected]);
    // Several retry periods later, still exactly one leader.
    await sleep(3 * timing.retryPeriodMs);
    expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
    const [leader, follower] = a.isLeader ? [a, b] : [b, a];
    expect(await holder('pair')).toBe(leader.identity);

    const stoppedAt = Date.now();
    await leader.stop();
    await follower.elected;
    const takeoverMs = Date.now() - stoppedAt;
    expect(takeoverMs).toBeLessThan(timing.leaseDurationMs);
    expect(await holder('pair')).toBe(follower.identity);
    // A takeover of a released Lease is a leader transition too (client-go counts it).
    expect((await client.get(builtin.leases, 'pair', namespace)).spec?.leaseTransitions).toBe(1);
    await follower.stop();
    // The last leader released the lease: nobody holds it.
    expect(await holder('pair')).toBeNull();
  });

  it('takes over from a leader that crashed, once its lease has expired', async () => {
    const script = fileURLToPath(new URL('../test-support/leader-process.ts', import.meta.url));
    const child = spawn(process.execPath, [script, sharedKubeconfigPath(), namespace, 'crash', 'crashing'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => line === 'LEADING' && resolve());
      child.once('exit', (code) => reject(new Error(`leader process exited early (${code})`)));
    });
    const survivor = contender('crash', 'survivor');
    await survivor.start();
    await sleep(2 * timing.retryPeriodMs);
    expect(survivor.isLeader).toBe(false);

    const killedAt = Date.now();
    child.kill('SIGKILL');
    await survivor.elected;
    const takeoverMs = Date.now() - killedAt;
    // It must wait for the lease to expire (nobody released it), and not much longer.
    expect(takeoverMs).toBeGreaterThanOrEqual(timing.leaseDurationMs - 2 * timing.retryPeriodMs);
    expect(takeoverMs).toBeLessThan(timing.leaseDurationMs + 8 * timing.retryPeriodMs);
    const lease = await client.get(builtin.leases, 'crash', namespace);
    expect(lease.spec?.holderIdentity).toBe('survivor');
    expect(lease.spec?.leaseTransitions).toBe(1);
    await survivor.stop();
  });

  it('stops a leader cut off from the API server before another replica can take over', async () => {
    const direct = clusterAccess(kubeConfig);
    const proxy = await startTcpProxy(Number(new URL(direct.server).port));
    const throughProxy: ClusterAccess = {
      server: `https://127.0.0.1:${proxy.port}`,
      credentials: () => direct.credentials(),
    };
    // Each replica runs a long reconcile that works until its signal says stop: what a leader
    // does after that moment is what a replica without the lease must never do.
    const work: { who: string; at: number }[] = [];
    let lostAt = 0;
    const replica = (identity: string, access: ClusterAccess) => {
      const manager: Manager = new Manager({
        kubeConfig: access,
        name: 'cut-test',
        logger: memoryLogger().log,
        namespaces: [namespace],
        leaderElection: { namespace, leaseName: 'cut', identity, ...timing },
        shutdownTimeoutMs: 500, // the work below only ends when aborted
        onLostLeadership: () => {
          lostAt = Date.now();
          void manager.stop();
        },
      });
      manager.controller({
        name: 'worker',
        for: builtin.configMaps,
        async reconcile({ name }, { signal }) {
          if (name !== 'long-work') return;
          while (!signal.aborted) {
            work.push({ who: identity, at: Date.now() });
            await sleep(50);
          }
        },
      });
      return manager;
    };
    const cutOff = replica('cut-off', throughProxy);
    const other = replica('other', direct);
    try {
      await cutOff.start();
      await cutOff.elected;
      await client.create(builtin.configMaps, { metadata: { name: 'long-work', namespace } });
      await waitUntil('the leader works', async () => work.length > 0, { timeoutMs: 10_000 });
      await other.start();
      // The leader's link to the API server goes silent: its requests hang, they are not refused.
      proxy.stall();
      await other.elected;
      const otherLeadsAt = Date.now();
      const lastByCutOff = Math.max(...work.filter((w) => w.who === 'cut-off').map((w) => w.at));
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThan(otherLeadsAt);
      expect(lastByCutOff).toBeLessThan(otherLeadsAt);
      await waitUntil('the new leader works', async () => work.some((w) => w.who === 'other'), {
        timeoutMs: 10_000,
      });
    } finally {
      await other.stop();
      await cutOff.stop();
      await proxy.close();
    }
  });

  it('drains an in-flight reconcile on shutdown before releasing anything', async () => {
    let finished = false;
    const manager = new Manager({
      kubeConfig,
      name: 'drain-test',
      logger: memoryLogger().log,
      namespaces: [namespace],
      shutdownTimeoutMs: 10_000,
    });
    let started: () => void = () => undefined;
    const reconcileStarted = new Promise<void>((r) => (started = r));
    manager.controller({
      name: 'slow',
      for: builtin.configMaps,
      async reconcile() {
        started();
        await sleep(1500);
        finished = true;
      },
    });
    await manager.start();
    await client.create(builtin.configMaps, { metadata: { name: 'drain-me', namespace } });
    await reconcileStarted;
    await manager.stop();
    expect(finished).toBe(true);
  });
});

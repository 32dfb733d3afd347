// Each test starts its own real etcd + kube-apiserver, because each breaks it on purpose:
// restarts the API server, compacts etcd, or cuts the network between informer and API server.
import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import {
  binaryPath,
  startControlPlane,
  startTcpProxy,
  waitUntil,
  type ControlPlane,
  type TcpProxy,
} from '@homeostat/testing';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import { Informer } from './informer.ts';
import { memoryLogger } from '../testing/memory-logger.ts';

const run = promisify(execFile);
const namespace = 'watched';

/** A kubeconfig for the same API server, reached through `proxy`. */
function throughProxy(controlPlane: ControlPlane, proxy: TcpProxy): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(controlPlane.kubeconfigPath);
  const text = JSON.stringify(JSON.parse(config.exportConfig()), (key, value: unknown) =>
    key === 'server' ? `https://127.0.0.1:${proxy.port}` : value,
  );
  const proxied = new KubeConfig();
  proxied.loadFromString(text);
  return proxied;
}

const configMap = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, namespace, labels },
  data: { v: name },
});

describe('reflector on a real kube-apiserver + etcd that fails', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(apiServerFlags: string[] = []) {
    const controlPlane = await startControlPlane({ apiServerFlags });
    cleanups.push(() => controlPlane.stop());
    const direct = new KubeClient(controlPlane.kubeConfig, { fieldManager: 'test' });
    cleanups.push(async () => direct.close());
    await direct.create(builtin.namespaces, { metadata: { name: namespace } });
    return { controlPlane, direct };
  }

  function informerOn(kubeConfig: KubeConfig, options: ConstructorParameters<typeof Informer>[3] = {}) {
    const client = new KubeClient(kubeConfig, { fieldManager: 'informer' });
    const informer = new Informer(client, builtin.configMaps, memoryLogger().log, {
      namespaces: [namespace],
      backoffMs: [200, 2000],
      ...options,
    });
    informer.start();
    cleanups.push(async () => {
      await informer.stop();
      client.close();
    });
    return informer;
  }

  const names = (informer: Informer<{ metadata?: { name?: string } }>) =>
    informer.store
      .list()
      .map((o) => o.metadata?.name)
      .sort();

  it('recovers when the API server restarts in the middle of a watch, and converges', async () => {
    const { controlPlane, direct } = await setUp();
    await direct.create(builtin.configMaps, configMap('before'));
    const informer = informerOn(controlPlane.kubeConfig);
    await informer.waitForSync();
    expect(names(informer)).toEqual(['before']);
    const watchesBefore = informer.stats().watches;

    await controlPlane.restartApiServer(1000);
    await direct.create(builtin.configMaps, configMap('after'));
    await direct.delete(builtin.configMaps, 'before', namespace);
    await direct.patch(builtin.configMaps, 'after', namespace, { data: { v: 'changed' } });

    await waitUntil(
      'the informer converges after the restart',
      async () =>
        names(informer).join() === 'after' &&
        informer.store.get(`${namespace}/after`)?.data?.['v'] === 'changed',
      {
        timeoutMs: 60_000,
        describe: () => JSON.stringify({ names: names(informer), stats: informer.stats() }),
      },
    );
    expect(informer.stats().watches).toBeGreaterThan(watchesBefore);
  });

  it('relists after 410 Gone (etcd compacted past its resourceVersion) and misses nothing', async () => {
    // Without the watch cache, watches are served by etcd, where compaction makes an old
    // resourceVersion unusable: what a client disconnected for long meets in production.
    const { controlPlane, direct } = await setUp(['--watch-cache=false']);
    const proxy = await startTcpProxy(Number(new URL(controlPlane.server).port));
    cleanups.push(() => proxy.close());
    const watched = { app: 'watched' };
    await direct.create(builtin.configMaps, configMap('old', watched));
    const informer = informerOn(throughProxy(controlPlane, proxy), { labelSelector: 'app=watched' });
    await informer.waitForSync();
    expect(names(informer)).toEqual(['old']);

    proxy.cut(); // the informer loses the API server while the world moves on
    await direct.create(builtin.configMaps, configMap('new', watched));
    await direct.delete(builtin.configMaps, 'old', namespace);
    for (let i = 0; i < 5; i++) await direct.create(builtin.configMaps, configMap(`unwatched-${i}`));
    const { resourceVersion } = await direct.list(builtin.configMaps, { namespace });
    // Here, and only here, the resourceVersion is read as what it is on this API server: etcd's revision.
    await run(binaryPath('etcdctl'), ['--endpoints', controlPlane.etcdEndpoint, 'compact', resourceVersion]);
    proxy.resume();

    await waitUntil('the informer relists and converges', async () => names(informer).join() === 'new', {
      timeoutMs: 60_000,
      describe: () => JSON.stringify({ names: names(informer), stats: informer.stats() }),
    });
    expect(informer.stats().relistsAfterGone).toBeGreaterThanOrEqual(1);
  });

  it('reopens a watch that has gone silent (a black-holed connection) and catches up', async () => {
    const { controlPlane, direct } = await setUp();
    const proxy = await startTcpProxy(Number(new URL(controlPlane.server).port));
    cleanups.push(() => proxy.close());
    const informer = informerOn(throughProxy(controlPlane, proxy), { idleTimeoutMs: 2000 });
    await informer.waitForSync();
    await waitUntil('the watch is open', async () => informer.stats().watches >= 1, { timeoutMs: 10_000 });
    await sleep(300);

    proxy.blackholeOpenConnections(); // the open watch will never deliver another byte
    await direct.create(builtin.configMaps, configMap('during-silence'));

    await waitUntil(
      'the informer sees the change through a new watch',
      async () => names(informer).includes('during-silence'),
      {
        timeoutMs: 30_000,
        describe: () => JSON.stringify(informer.stats()),
      },
    );
    expect(informer.stats().idleTimeouts).toBeGreaterThanOrEqual(1);
  });
});

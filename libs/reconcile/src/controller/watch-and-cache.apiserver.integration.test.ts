// What a controller sees of other kinds, on a real kube-apiserver + etcd (shared by this project's
// tests): mapped watches under change-detecting predicates, reads of kinds nobody watches, and
// errors a reconcile marks as permanent.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '../client/kube-client.ts';
import { PermanentError } from '../client/errors.ts';
import { builtin } from '../client/resource-type.ts';
import { Manager } from '../manager/manager.ts';
import { widgetCrd, widgets } from '../test-support/widget.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { NotCachedError, watch } from './controller.ts';
import { labelsChanged } from './predicates.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `watch-cache-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const pointer = 'test.homeostat.dev/widget';

describe('a controller reading other kinds, on a real kube-apiserver + etcd', () => {
  const managers: Manager[] = [];
  const start = async (manager: Manager) => {
    managers.push(manager);
    await manager.start();
    return manager;
  };
  const newManager = (name: string) =>
    new Manager({ kubeConfig, name, logger: memoryLogger().log, namespaces: [namespace] });

  beforeAll(async () => {
    await installCrds(kubeConfig, [widgetCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    for (const name of ['alpha', 'beta', 'gamma', 'broken']) {
      await client.create(widgets, { metadata: { name, namespace }, spec: { size: 1 } });
    }
  });
  afterAll(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    client.close();
  });

  it('filters a watched change once on (old, new), then reaches both the old and the new target', async () => {
    const seen: string[] = [];
    const manager = newManager('relabel-test');
    manager.controller({
      name: 'by-label',
      for: widgets,
      watches: [
        watch({
          type: builtin.configMaps,
          predicates: [labelsChanged],
          map: (cm) => {
            const target = cm.metadata?.labels?.[pointer];
            return target ? [{ namespace, name: target }] : [];
          },
        }),
      ],
      async reconcile({ name }) {
        seen.push(name);
      },
    });
    await start(manager);
    await client.create(builtin.configMaps, {
      metadata: { name: 'pointer', namespace, labels: { [pointer]: 'alpha' } },
    });
    await waitUntil('alpha reconciled', async () => seen.includes('alpha'), { timeoutMs: 10_000 });
    const before = seen.length;
    // Relabelled from alpha to beta: alpha must hear of it too (it lost the ConfigMap).
    await client.patch(builtin.configMaps, 'pointer', namespace, {
      metadata: { labels: { [pointer]: 'beta' } },
    });
    await waitUntil(
      'both reconciled after the relabel',
      async () => seen.slice(before).includes('alpha') && seen.slice(before).includes('beta'),
      { timeoutMs: 10_000 },
    );
    // A change the predicate rejects (data only) maps to nobody.
    const settled = seen.length;
    await client.patch(builtin.configMaps, 'pointer', namespace, { data: { touched: 'yes' } });
    await sleep(1000);
    expect(seen.length).toBe(settled);
  });

  it('refuses to read a kind nobody watches instead of answering "not found"', async () => {
    await client.create(builtin.secrets, { metadata: { name: 'exists', namespace }, data: {} });
    const outcomes: unknown[] = [];
    const manager = newManager('unwatched-read-test');
    manager.controller({
      name: 'reads-secrets',
      for: widgets,
      async reconcile({ name }, ctx) {
        if (name !== 'gamma') return;
        try {
          outcomes.push(ctx.cache.get(builtin.secrets, 'exists', namespace));
        } catch (error) {
          outcomes.push(error);
        }
      },
    });
    await start(manager);
    await waitUntil('gamma reconciled', async () => outcomes.length > 0, { timeoutMs: 10_000 });
    expect(outcomes[0]).toBeInstanceOf(NotCachedError);
    expect(String(outcomes[0])).toContain('Secret (v1) is not watched by this manager');
  });

  it('does not retry an error marked permanent, and tells the user with a Warning Event', async () => {
    let attempts = 0;
    const manager = newManager('permanent-error-test');
    manager.controller({
      name: 'refuses',
      for: widgets,
      async reconcile({ name }) {
        if (name !== 'broken') return;
        attempts++;
        throw new PermanentError('InvalidSpec', 'broken widgets cannot be reconciled: fix the spec');
      },
    });
    await start(manager);
    const warning = async () =>
      (await client.list(builtin.events, { namespace })).items.find(
        (e) => e.regarding?.name === 'broken' && e.reason === 'InvalidSpec',
      );
    await waitUntil('the Warning Event', async () => (await warning()) !== undefined, { timeoutMs: 10_000 });
    expect(await warning()).toMatchObject({
      type: 'Warning',
      note: 'broken widgets cannot be reconciled: fix the spec',
    });
    // A retried error would have come back within 5 ms, 10 ms, 20 ms...
    await sleep(1500);
    expect(attempts).toBe(1);
  });
});

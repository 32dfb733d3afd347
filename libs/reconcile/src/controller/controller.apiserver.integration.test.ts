// Runs the Widget operator against a real kube-apiserver + etcd (shared by this project's tests).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import { Manager } from '../manager/manager.ts';
import { watch, type ReconcileRequest, type Reconciler } from './controller.ts';
import { widgetCrd, widgets, type Widget } from '../test-support/widget.ts';
import { widgetFinalizer, widgetOperator } from '../test-support/widget-operator.ts';
import { memoryLogger } from '../testing/memory-logger.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `controller-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const widget = (name: string, size: number): Widget => ({ metadata: { name, namespace }, spec: { size } });

describe('controller on a real kube-apiserver + etcd', () => {
  const { log, lines } = memoryLogger();
  const reconciled: string[] = [];
  const running = new Map<string, number>();
  let maxPerKey = 0;
  let maxOverall = 0;
  let releaseCleanup: () => void = () => undefined;
  let cleanupGate = new Promise<void>((r) => (releaseCleanup = r));
  let manager: Manager;

  beforeAll(async () => {
    await installCrds(kubeConfig, [widgetCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    manager = widgetOperator(
      kubeConfig,
      {
        logger: log,
        namespaces: [namespace],
        maxConcurrentReconciles: 4,
        // The slow-* widgets' reconciles take 150 ms: each is reported as still running.
        slowReconcileWarningMs: 100,
        healthPort: 0,
        metricsPort: 0,
        bindAddress: '127.0.0.1',
      },
      {
        async beforeReconcile(name) {
          reconciled.push(name);
          running.set(name, (running.get(name) ?? 0) + 1);
          maxPerKey = Math.max(maxPerKey, running.get(name) ?? 0);
          maxOverall = Math.max(
            maxOverall,
            [...running.values()].reduce((a, b) => a + b, 0),
          );
          try {
            if (name.startsWith('slow')) await sleep(150);
            if (name === 'explode') throw new Error('the widget exploded');
          } finally {
            running.set(name, (running.get(name) ?? 1) - 1);
          }
        },
        cleanupGate: () => cleanupGate,
      },
    );
    await manager.start();
  });

  afterAll(async () => {
    await manager.stop();
    client.close();
  });

  const configMapData = async (name: string) =>
    (await client.find(builtin.configMaps, `${name}-gizmos`, namespace))?.data;

  it('creates the owned object with a controller ownerReference and reports status', async () => {
    const created = await client.create(widgets, widget('alpha', 3));
    await waitUntil(
      'alpha converged',
      async () => (await client.get(widgets, 'alpha', namespace)).status?.gizmos === 3,
      { timeoutMs: 20_000 },
    );
    const configMap = await client.get(builtin.configMaps, 'alpha-gizmos', namespace);
    expect(configMap.data).toEqual({ size: '3' });
    expect(configMap.metadata?.ownerReferences).toEqual([
      {
        apiVersion: widgets.apiVersion,
        kind: 'Widget',
        name: 'alpha',
        uid: created.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const alpha = await client.get(widgets, 'alpha', namespace);
    expect(alpha.metadata?.finalizers).toEqual([widgetFinalizer]);
    expect(alpha.status?.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
      reason: 'GizmosWritten',
      observedGeneration: 1,
    });
  });

  it('enqueues the owner when an owned object changes, and repairs it', async () => {
    await waitUntil('alpha ConfigMap', async () => (await configMapData('alpha'))?.['size'] === '3', {
      timeoutMs: 20_000,
    });
    await client.patch(builtin.configMaps, 'alpha-gizmos', namespace, { data: { size: 'tampered' } });
    await waitUntil(
      'ConfigMap repaired by its owner',
      async () => (await configMapData('alpha'))?.['size'] === '3',
      { timeoutMs: 20_000 },
    );
    await client.delete(builtin.configMaps, 'alpha-gizmos', namespace);
    await waitUntil(
      'ConfigMap recreated by its owner',
      async () => (await configMapData('alpha'))?.['size'] === '3',
      { timeoutMs: 20_000 },
    );
  });

  it('causes zero writes for a converged object, however often it is reconciled', async () => {
    await client.create(widgets, widget('steady', 2));
    await waitUntil(
      'steady converged',
      async () => (await client.get(widgets, 'steady', namespace)).status?.gizmos === 2,
      { timeoutMs: 20_000 },
    );
    await waitUntil(
      'steady ConfigMap cached',
      async () =>
        manager.cache.informer(builtin.configMaps).store.get(`${namespace}/steady-gizmos`) !== undefined,
      { timeoutMs: 10_000 },
    );
    const controller = manager.controllerNamed('widget');
    expect(controller).toBeDefined();
    await sleep(1000); // let the last status write's echo settle
    const writes = () =>
      ['POST', 'PUT', 'PATCH', 'DELETE'].reduce(
        (sum, verb) => sum + (manager.client.transport.counts[verb] ?? 0),
        0,
      );
    const before = { writes: writes(), reconciles: reconciled.filter((n) => n === 'steady').length };
    for (let i = 0; i < 5; i++) {
      controller?.enqueue({ namespace, name: 'steady' });
      await waitUntil(
        `reconcile ${i + 1}`,
        async () => reconciled.filter((n) => n === 'steady').length >= before.reconciles + i + 1,
        { timeoutMs: 10_000 },
      );
    }
    await sleep(300);
    expect(reconciled.filter((n) => n === 'steady').length).toBeGreaterThanOrEqual(before.reconciles + 5);
    expect(writes()).toBe(before.writes);
  });

  it('removes a field the desired state no longer sets, then writes nothing more', async () => {
    await client.create(widgets, {
      metadata: { name: 'labelled', namespace },
      spec: { size: 1, labels: { tier: 'gold', team: 'a' } },
    });
    const labels = async () =>
      (await client.find(builtin.configMaps, 'labelled-gizmos', namespace))?.metadata?.labels;
    await waitUntil('labels reach the ConfigMap', async () => (await labels())?.['tier'] === 'gold', {
      timeoutMs: 20_000,
    });
    // The user drops one label: the desired ConfigMap is still a subset of the live one, yet the
    // label must go (the operator's field manager owns it).
    await client.patch(widgets, 'labelled', namespace, { spec: { labels: { tier: null } } });
    await waitUntil('the dropped label is removed', async () => (await labels())?.['tier'] === undefined, {
      timeoutMs: 20_000,
    });
    expect(await labels()).toEqual({ team: 'a' });
    await client.patch(widgets, 'labelled', namespace, { spec: { labels: null } });
    await waitUntil('every label is removed', async () => (await labels()) === undefined, {
      timeoutMs: 20_000,
    });
  });

  it('blocks deletion with a finalizer until the reconciler removes it', async () => {
    await client.create(widgets, widget('doomed', 1));
    await waitUntil(
      'doomed has its finalizer',
      async () =>
        (await client.get(widgets, 'doomed', namespace)).metadata?.finalizers?.includes(widgetFinalizer) ??
        false,
      { timeoutMs: 20_000 },
    );
    await client.delete(widgets, 'doomed', namespace);
    await sleep(1000);
    const held = await client.find(widgets, 'doomed', namespace);
    expect(held?.metadata?.deletionTimestamp).toBeTruthy();
    releaseCleanup();
    await waitUntil(
      'doomed is gone',
      async () => (await client.find(widgets, 'doomed', namespace)) === undefined,
      { timeoutMs: 20_000 },
    );
    cleanupGate = Promise.resolve();
  });

  it('backs off a failing key with a log line naming it, and keeps serving others', async () => {
    await client.create(widgets, widget('explode', 1));
    await client.create(widgets, widget('bystander', 4));
    await waitUntil('explode retried', async () => reconciled.filter((n) => n === 'explode').length >= 4, {
      timeoutMs: 20_000,
    });
    await waitUntil(
      'bystander converged',
      async () => (await client.get(widgets, 'bystander', namespace)).status?.gizmos === 4,
      { timeoutMs: 20_000 },
    );
    const failure = lines.find(
      (l) => l['msg'] === 'reconcile failed; retrying with backoff' && l['name'] === 'explode',
    );
    expect(failure).toMatchObject({ controller: 'widget', namespace, name: 'explode' });
    expect(String((failure?.['err'] as { message?: string } | undefined)?.message)).toContain(
      'the widget exploded',
    );
    expect(typeof failure?.['reconcileID']).toBe('string');
    const metrics = await manager.metrics.registry.getSingleMetricAsString(
      'controller_runtime_reconcile_errors_total',
    );
    expect(metrics).toMatch(/controller_runtime_reconcile_errors_total\{controller="widget"\} [1-9]/);
  });

  it('runs up to maxConcurrentReconciles at once, never two for one key', async () => {
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.create(widgets, widget(`slow-${i}`, i))));
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          client.patch(widgets, `slow-${i}`, namespace, { spec: { size: i + round + 1 } }),
        ),
      );
    }
    await waitUntil(
      'slow widgets converged',
      async () => {
        const list = await client.list(widgets, { namespace });
        return list.items
          .filter((w) => w.metadata?.name?.startsWith('slow'))
          .every((w) => w.status?.gizmos === w.spec.size);
      },
      { timeoutMs: 30_000 },
    );
    expect(maxPerKey).toBe(1);
    expect(maxOverall).toBeGreaterThan(1);
    expect(maxOverall).toBeLessThanOrEqual(4);
  });

  it('logs a reconcile still running after slowReconcileWarningMs, with its key', async () => {
    await waitUntil('slow-0 reconciled', async () => reconciled.includes('slow-0'), { timeoutMs: 20_000 });
    const warning = lines.find((l) => l['msg'] === 'reconcile still running' && l['name'] === 'slow-0');
    expect(warning).toMatchObject({ controller: 'widget', namespace, name: 'slow-0' });
    expect(Number(warning?.['runningForMs'])).toBeGreaterThanOrEqual(90);
  });

  it('serves /healthz, /readyz and /metrics with the controller-runtime names', async () => {
    const get = async (port: number | undefined, path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, text: await res.text() };
    };
    expect(await get(manager.healthPort, '/healthz')).toEqual({ status: 200, text: 'ok' });
    expect(await get(manager.healthPort, '/readyz')).toEqual({ status: 200, text: 'ok' });
    const metrics = (await get(manager.metricsPort, '/metrics')).text;
    for (const name of [
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_time_seconds',
      'controller_runtime_max_concurrent_reconciles',
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'workqueue_retries_total',
    ]) {
      expect(metrics).toContain(name);
    }
    expect(metrics).toMatch(
      /controller_runtime_reconcile_total\{controller="widget",result="success"\} [1-9]/,
    );
    expect(metrics).toMatch(/controller_runtime_max_concurrent_reconciles\{controller="widget"\} 4/);
  });

  it('emits an Event about the object it changed', async () => {
    const events = await client.list(builtin.events, { namespace });
    const about = events.items.filter((e) => e.regarding?.name === 'alpha' && e.reason === 'GizmosWritten');
    expect(about.length).toBeGreaterThan(0);
    expect(about[0]).toMatchObject({
      type: 'Normal',
      reportingController: 'widget-operator',
      action: 'Reconcile',
    });
  });

  it('reconciles the objects a watched kind maps to, watching only what its label selector matches', async () => {
    // A reconciler object (its method called on it, keeping its state), as the operators give theirs.
    class Recorder implements Reconciler<Widget> {
      readonly seen: string[] = [];
      async reconcile({ name }: ReconcileRequest<Widget>): Promise<void> {
        this.seen.push(name);
      }
    }
    const recorder = new Recorder();
    const seen = recorder.seen;
    const selector = 'test.homeostat.dev/watched=true';
    const mapped = new Manager({
      kubeConfig,
      name: 'mapping-test',
      logger: memoryLogger().log,
      namespaces: [namespace],
    });
    mapped.controller({
      name: 'by-secret',
      for: widgets,
      watches: [
        watch({
          type: builtin.secrets,
          labelSelector: selector,
          map: (secret) => {
            const target = secret.metadata?.annotations?.['test.homeostat.dev/widget'];
            return target ? [{ namespace: secret.metadata?.namespace ?? namespace, name: target }] : [];
          },
        }),
      ],
      reconcile: recorder,
    });
    await mapped.start();
    try {
      const before = seen.filter((n) => n === 'alpha').length;
      // Unlabelled, created first: were it watched, it would enqueue beta before alpha's turn.
      await client.create(builtin.secrets, {
        metadata: { name: 'unwatched', namespace, annotations: { 'test.homeostat.dev/widget': 'beta' } },
      });
      await client.create(builtin.secrets, {
        metadata: {
          name: 'points-at-alpha',
          namespace,
          labels: { 'test.homeostat.dev/watched': 'true' },
          annotations: { 'test.homeostat.dev/widget': 'alpha' },
        },
      });
      await waitUntil(
        'the Secret enqueues its Widget',
        async () => seen.filter((n) => n === 'alpha').length > before,
        { timeoutMs: 20_000 },
      );
      expect(seen).not.toContain('beta');
      const cached = mapped.cache.informer(builtin.secrets, { labelSelector: selector }).store.list();
      expect(cached.map((s) => s.metadata?.name)).toEqual(['points-at-alpha']);
    } finally {
      await mapped.stop();
    }
  });
});

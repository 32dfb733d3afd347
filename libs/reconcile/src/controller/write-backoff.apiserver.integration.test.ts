// A write the real API server keeps refusing, made through ctx.writes: the reconcile around it runs
// on its own schedule while the write is sent only as its own backoff allows (ADR 0603).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import type { WriteFailure } from '../helpers/write-failure.ts';
import { Manager } from '../manager/manager.ts';
import { memoryLogger } from '../testing/memory-logger.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `write-backoff-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });

describe('ctx.writes on a real kube-apiserver', () => {
  const seen = new Map<string, { reconciles: number; sent: number; failures: WriteFailure[] }>();
  let manager: Manager;

  beforeAll(async () => {
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    manager = new Manager({
      kubeConfig,
      name: 'write-backoff-test',
      namespaces: [namespace],
      logger: memoryLogger().log,
      bindAddress: '127.0.0.1',
      healthPort: 0,
      metricsPort: 0,
    });
    manager.controller({
      name: 'refused-writer',
      for: builtin.configMaps,
      async reconcile({ name, object }, ctx) {
        if (!object) return undefined;
        const record = seen.get(name) ?? { reconciles: 0, sent: 0, failures: [] };
        seen.set(name, record);
        record.reconciles++;
        // Refused every time: the namespace it names does not exist.
        await ctx.writes.attempt(`creating Secret ${name}`, () => {
          record.sent++;
          return ctx.client.create(builtin.secrets, { metadata: { name, namespace: `${namespace}-absent` } });
        });
        record.failures.push(...ctx.writes.failures);
        // "probe-*" asks to be called often, as a prober would; "quiet-*" asks for nothing.
        return name.startsWith('probe') ? { requeueAfterMs: 20 } : undefined;
      },
    });
    await manager.start();
  });

  afterAll(async () => {
    await manager.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
  });

  it('keeps the requeue the reconcile asks for, sending the refused write far less often', async () => {
    await client.create(builtin.configMaps, { metadata: { name: 'probe-1', namespace } });
    await waitUntil('40 reconciles of probe-1', async () => (seen.get('probe-1')?.reconciles ?? 0) >= 40, {
      timeoutMs: 60_000,
    });
    const record = seen.get('probe-1');
    // Sent at 5, 10, 20, 40 … ms of backoff: a handful of times over 40 reconciles.
    expect(record?.sent).toBeLessThan((record?.reconciles ?? 0) / 2);
    expect(record?.failures[0]?.message).toMatch(
      new RegExp(`^creating Secret probe-1: namespaces "${namespace}-absent" not found`),
    );
    expect(record?.failures.some((f) => f.repeated)).toBe(true);
    // Every repeat says the same thing, so a status built from it does not change.
    expect(new Set(record?.failures.map((f) => f.message)).size).toBe(1);
  });

  it('brings the key back when its refused write is due, though the reconcile asked for nothing', async () => {
    await client.create(builtin.configMaps, { metadata: { name: 'quiet-1', namespace } });
    await waitUntil('quiet-1 sent its write 5 times', async () => (seen.get('quiet-1')?.sent ?? 0) >= 5, {
      timeoutMs: 60_000,
    });
    // Nothing changed the ConfigMap after its creation: only the write's backoff brought it back.
    expect(seen.get('quiet-1')?.reconciles).toBeGreaterThanOrEqual(5);
  });
});

// conditionAsWritten and warnRefusedWrites against a real kube-apiserver + etcd, with the copy a
// lagging informer cache hands the next reconcile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { installCrds } from '@homeostat/testing';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import { EventRecorder } from '../events/event-recorder.ts';
import { widgetCrd, widgets } from '../test-support/widget.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { conditionAsWritten } from './condition-as-written.ts';
import type { Condition } from './conditions.ts';
import { WriteFailure, warnRefusedWrites } from './write-failure.ts';

const namespace = `said-${process.pid}`;
const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'homeostat-test' });

const degraded = (message: string): Condition => ({
  type: 'Degraded',
  status: 'True',
  reason: 'NameTaken',
  message,
  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
});

describe('conditionAsWritten on a real kube-apiserver + etcd', () => {
  beforeAll(async () => {
    await installCrds(sharedKubeConfig(), [widgetCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });
  afterAll(() => client.close());

  it('reads the condition this process last wrote, not the one a copy older than that write shows', async () => {
    const copy = await client.create(widgets, {
      metadata: { name: 'lagging', namespace },
      spec: { size: 1 },
    });
    expect(await conditionAsWritten(client, widgets, copy, 'Degraded')).toBeUndefined();
    const written = await client.applyStatus(widgets, {
      metadata: { name: 'lagging', namespace },
      status: { conditions: [degraded('Service lagging: the name is taken')] },
    });
    // The cache has not shown the write yet: its copy is the one from before.
    expect((await conditionAsWritten(client, widgets, copy, 'Degraded'))?.message).toBe(
      'Service lagging: the name is taken',
    );
    // Another reconcile's client on the same connections knows the write too.
    const other = new KubeClient(client.transport, { fieldManager: 'homeostat-test' });
    expect((await conditionAsWritten(other, widgets, copy, 'Degraded'))?.message).toBe(
      'Service lagging: the name is taken',
    );
    // A copy of the written version is taken as it is.
    expect((await conditionAsWritten(client, widgets, written, 'Degraded'))?.status).toBe('True');
  });

  it('warns of a refusal once, though the next reconcile decides from a copy that predates the status saying it', async () => {
    const copy = await client.create(widgets, {
      metadata: { name: 'squatted', namespace },
      spec: { size: 1 },
    });
    const recorder = new EventRecorder(client, 'homeostat-test', 'test-0', memoryLogger().log);
    const taken = new WriteFailure('Service squatted', 'the name is taken', { reason: 'NameTaken' });
    // Two reconciles in a row find the same refusal; the first reports it in Degraded.
    for (let round = 0; round < 2; round++) {
      const said = (await conditionAsWritten(client, widgets, copy, 'Degraded'))?.message ?? '';
      await warnRefusedWrites(recorder, copy, [taken], said);
      await client.applyStatus(widgets, {
        metadata: { name: 'squatted', namespace },
        status: { conditions: [degraded(taken.message)] },
      });
    }
    expect(await recorder.flush(10_000)).toBe(true);
    const { items } = await client.list(builtin.events, { namespace });
    const about = items.filter((e) => e.regarding?.name === 'squatted');
    expect(about.map((e) => [e.reason, e.series?.count ?? 1])).toEqual([['NameTaken', 1]]);
  });
});

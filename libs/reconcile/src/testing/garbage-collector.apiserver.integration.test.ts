// The garbage-collector stand-in on a real kube-apiserver: what a deleted owner alone owned goes, an
// object with a live owner too stays, and a dependent made after the owner was collected (a
// reconcile in flight that still saw the owner) goes as well, as with the real collector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';
import { GarbageCollectorStandIn } from './garbage-collector.ts';

const namespace = `garbage-collector-${process.pid}`;
const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'test' });
const collector = new GarbageCollectorStandIn(client, namespace, { kinds: [builtin.configMaps] });

/** A ConfigMap to own others (any object with a uid will do). */
async function owner(name: string): Promise<{ name: string; uid: string }> {
  const made = await client.create(builtin.configMaps, { metadata: { name, namespace } });
  return { name, uid: made.metadata?.uid ?? '' };
}

async function dependent(name: string, ...owners: { name: string; uid: string }[]): Promise<void> {
  await client.create(builtin.configMaps, {
    metadata: {
      name,
      namespace,
      ownerReferences: owners.map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.name, uid: o.uid })),
    },
  });
}

const names = async () =>
  (await client.list(builtin.configMaps, { namespace })).items.map((c) => c.metadata?.name).sort();

describe('GarbageCollectorStandIn on a real kube-apiserver', () => {
  beforeAll(async () => {
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });
  afterAll(async () => {
    await collector.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
  });

  it('deletes what the owner alone owned, keeps what a live owner shares, and what is made later goes too', async () => {
    const gone = await owner('gone');
    const kept = await owner('kept');
    await dependent('only-gone', gone);
    await dependent('shared', gone, kept);
    await dependent('only-kept', kept);
    await client.delete(builtin.configMaps, 'gone', namespace);

    expect(await collector.collect(gone.uid)).toEqual(['ConfigMap/only-gone']);
    expect(await names()).toEqual(expect.arrayContaining(['kept', 'only-kept', 'shared']));
    expect(await names()).not.toContain('only-gone');

    // Made after the sweep, as a reconcile that still saw the owner would: collected as well.
    await dependent('late', gone);
    await waitUntil('the late dependent of gone deleted', async () => !(await names()).includes('late'), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(await names()).toEqual(expect.arrayContaining(['kept', 'only-kept', 'shared']));
  });
});

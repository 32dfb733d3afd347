// The client and the event recorder against a real kube-apiserver + etcd (shared by this project's tests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { installCrds } from '@homeostat/testing';
import { KubeClient } from './kube-client.ts';
import { builtin } from './resource-type.ts';
import { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from './errors.ts';
import { EventRecorder } from '../events/event-recorder.ts';
import { widgetCrd, widgets, type Widget } from '../test-support/widget.ts';
import { memoryLogger } from '../testing/memory-logger.ts';

const namespace = `client-${process.pid}`;
const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'homeostat-test' });

describe('KubeClient on a real kube-apiserver + etcd', () => {
  beforeAll(async () => {
    await installCrds(sharedKubeConfig(), [widgetCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });
  afterAll(() => client.close());

  it('reads with get (NotFoundError when absent) and find (undefined when absent)', async () => {
    await expect(client.get(builtin.configMaps, 'absent', namespace)).rejects.toBeInstanceOf(NotFoundError);
    expect(await client.find(builtin.configMaps, 'absent', namespace)).toBeUndefined();
  });

  it('lists every page and returns the list resourceVersion', async () => {
    for (let i = 0; i < 7; i++)
      await client.create(builtin.configMaps, {
        metadata: { name: `page-${i}`, namespace, labels: { paged: 'yes' } },
      });
    const list = await client.list(builtin.configMaps, { namespace, labelSelector: 'paged=yes', limit: 2 });
    expect(list.items.map((c) => c.metadata?.name).sort()).toEqual([
      'page-0',
      'page-1',
      'page-2',
      'page-3',
      'page-4',
      'page-5',
      'page-6',
    ]);
    expect(list.items[0]?.kind).toBe('ConfigMap');
    expect(list.resourceVersion).toMatch(/.+/);
  });

  it('server-side applies under its field manager, for built-in kinds and custom resources', async () => {
    const applied = await client.apply(builtin.configMaps, {
      metadata: { name: 'applied', namespace },
      data: { a: '1' },
    });
    expect(applied.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toEqual([
      ['homeostat-test', 'Apply'],
    ]);
    const widget = await client.apply(widgets, {
      metadata: { name: 'applied', namespace },
      spec: { size: 2 },
    } as Widget);
    expect(widget.spec.size).toBe(2);
    const withStatus = await client.applyStatus(widgets, {
      metadata: { name: 'applied', namespace },
      status: { gizmos: 2 },
    });
    expect(withStatus.status?.gizmos).toBe(2);
    const patched = await client.patchStatus(widgets, 'applied', namespace, { gizmos: 3 });
    expect(patched.status?.gizmos).toBe(3);
  });

  it('applies a status only to the incarnation it was computed from, not to one made again with the name', async () => {
    await client.apply(widgets, { metadata: { name: 'reborn', namespace }, spec: { size: 1 } } as Widget);
    const old = await client.get(widgets, 'reborn', namespace);
    await client.delete(widgets, 'reborn', namespace);
    await client.apply(widgets, { metadata: { name: 'reborn', namespace }, spec: { size: 2 } } as Widget);
    // A reconcile of the old object, in flight across the delete, writes the status it computed.
    const stale = client.applyStatusIfChanged(
      widgets,
      { metadata: { name: 'reborn', namespace }, status: { gizmos: 7 } },
      old,
    );
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    expect((await client.get(widgets, 'reborn', namespace)).status?.gizmos).toBeUndefined();
  });

  it('surfaces conflicts, duplicates and invalid objects as typed errors with the API server message', async () => {
    const original = await client.create(builtin.configMaps, {
      metadata: { name: 'contended', namespace },
      data: { v: '1' },
    });
    await client.replace(builtin.configMaps, { ...original, data: { v: '2' } });
    const stale = client.replace(builtin.configMaps, { ...original, data: { v: '3' } });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    await expect(
      client.create(builtin.configMaps, { metadata: { name: 'contended', namespace } }),
    ).rejects.toBeInstanceOf(AlreadyExistsError);
    const invalid = client.create(widgets, {
      metadata: { name: 'too-big', namespace },
      spec: { size: 20, color: 'red' },
    } as Widget);
    await expect(invalid).rejects.toBeInstanceOf(InvalidError);
    await expect(invalid).rejects.toThrow(/only blue widgets may have more than 10 gizmos/);
  });

  // A reconcile that runs before the informer cache has seen the previous reconcile's write is
  // handed the copy from before it; the copies below are exactly what such a cache returns.
  it('never skips an apply on a copy older than its own last write: the write it would leave in place is undone', async () => {
    const before = await client.apply(builtin.configMaps, {
      metadata: { name: 'stale', namespace },
      data: { ready: '3' },
    });
    const write = await client.applyIfChanged(
      builtin.configMaps,
      { metadata: { name: 'stale', namespace }, data: { ready: '2' } },
      before,
    );
    expect(write.written).toBe(true);
    // The next reconcile wants what the stale copy shows, and must still send it.
    const next = await client.applyIfChanged(
      builtin.configMaps,
      { metadata: { name: 'stale', namespace }, data: { ready: '3' } },
      before,
    );
    expect(next.written).toBe(true);
    expect((await client.get(builtin.configMaps, 'stale', namespace)).data).toEqual({ ready: '3' });
    // A copy of the version it wrote last is current: a converged object still costs no request.
    const converged = await client.applyIfChanged(
      builtin.configMaps,
      { metadata: { name: 'stale', namespace }, data: { ready: '3' } },
      next.object,
    );
    expect(converged.written).toBe(false);
  });

  it('never skips a status apply on a copy older than its own last status write, in a reconcile of its own', async () => {
    await client.apply(widgets, { metadata: { name: 'stale', namespace }, spec: { size: 3 } });
    const before = await client.applyStatus(widgets, {
      metadata: { name: 'stale', namespace },
      status: { gizmos: 3 },
    });
    // Each reconcile has a client of its own (withSignal), and an operator may build one on the
    // same connections: what one wrote, the others know.
    const first = client.withSignal(new AbortController().signal);
    await first.applyStatusIfChanged(
      widgets,
      { metadata: { name: 'stale', namespace }, status: { gizmos: 2 } },
      before,
    );
    const second = new KubeClient(client.transport, { fieldManager: 'homeostat-test' });
    const next = await second.applyStatusIfChanged(
      widgets,
      { metadata: { name: 'stale', namespace }, status: { gizmos: 3 } },
      before,
    );
    expect(next.written).toBe(true);
    expect((await client.get(widgets, 'stale', namespace)).status?.gizmos).toBe(3);
    const converged = await first.applyStatusIfChanged(
      widgets,
      { metadata: { name: 'stale', namespace }, status: { gizmos: 3 } },
      next.object,
    );
    expect(converged.written).toBe(false);
  });

  it('after someone else writes the object, sends one apply that changes nothing, then trusts the cache however often they write', async () => {
    // A child another controller keeps changing (a Deployment's status): its changes must not
    // cost this client a request each.
    const other = new KubeClient(sharedKubeConfig(), { fieldManager: 'someone-else' });
    const mine = { metadata: { name: 'shared', namespace }, data: { mine: '1' } };
    await client.apply(builtin.configMaps, mine);
    const theirs = (value: string) =>
      other.apply(builtin.configMaps, { metadata: { name: 'shared', namespace }, data: { theirs: value } });
    const afterOutsideWrite = await theirs('1');
    // Not the version this client wrote: it cannot tell the copy from an older one, and sends.
    const sent = await client.applyIfChanged(builtin.configMaps, mine, afterOutsideWrite);
    expect(sent.written).toBe(true);
    expect(sent.object.metadata?.resourceVersion).toBe(afterOutsideWrite.metadata?.resourceVersion);
    for (const value of ['2', '3']) {
      const copy = await theirs(value);
      expect((await client.applyIfChanged(builtin.configMaps, mine, copy)).written).toBe(false);
    }
    other.close();
  });

  it('deletes, reporting whether there was anything to delete', async () => {
    await client.create(builtin.configMaps, { metadata: { name: 'short-lived', namespace } });
    expect(await client.delete(builtin.configMaps, 'short-lived', namespace)).toBe(true);
    expect(await client.delete(builtin.configMaps, 'short-lived', namespace)).toBe(false);
  });

  it('deletes a pod at once with gracePeriodSeconds 0, where its own grace period waits for a kubelet', async () => {
    // Bound to a node that has no kubelet here: a graceful delete only marks it for deletion.
    const pod = (name: string) => ({
      metadata: { name, namespace },
      spec: { nodeName: 'no-kubelet', containers: [{ name: 'c', image: 'example.test/none' }] },
    });
    // No controller manager here creates the namespace's default ServiceAccount, which pods need.
    await client.create(builtin.serviceAccounts, { metadata: { name: 'default', namespace } });
    await client.create(builtin.pods, pod('graceful'));
    await client.create(builtin.pods, pod('immediate'));
    expect(await client.delete(builtin.pods, 'graceful', namespace)).toBe(true);
    expect((await client.get(builtin.pods, 'graceful', namespace)).metadata?.deletionTimestamp).toBeDefined();
    expect(await client.delete(builtin.pods, 'immediate', namespace, { gracePeriodSeconds: 0 })).toBe(true);
    expect(await client.find(builtin.pods, 'immediate', namespace)).toBeUndefined();
    await client.delete(builtin.pods, 'graceful', namespace, { gracePeriodSeconds: 0 });
  });
});

describe('EventRecorder on a real kube-apiserver + etcd', () => {
  it('aggregates a repeated event into one Event with a series count', async () => {
    const subject = await client.create(builtin.configMaps, { metadata: { name: 'eventful', namespace } });
    const recorder = new EventRecorder(client, 'homeostat-test', 'test-0', memoryLogger().log);
    for (let i = 0; i < 3; i++)
      await recorder.warning(subject, 'StillBroken', 'Reconcile', 'the same problem again');
    await recorder.normal(subject, 'Fixed', 'Reconcile', 'better now');
    // Recording returned before the API server had the events: they are written in the background.
    expect(recorder.pending).toBeGreaterThan(0);
    expect(await recorder.flush(10_000)).toBe(true);
    expect(recorder.pending).toBe(0);
    const { items } = await client.list(builtin.events, { namespace });
    const about = items.filter((e) => e.regarding?.name === 'eventful');
    expect(about.map((e) => [e.reason, e.type, e.series?.count ?? 1]).sort()).toEqual([
      ['Fixed', 'Normal', 1],
      ['StillBroken', 'Warning', 3],
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { Store, byNamespace, byOwnerUid } from './store.ts';
import type { KubeObject } from '../client/resource-type.ts';

const obj = (namespace: string, name: string, rv: string, owner?: string): KubeObject => ({
  metadata: {
    namespace,
    name,
    resourceVersion: rv,
    ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: owner }] } : {}),
  },
});

describe('Store', () => {
  it('indexes by namespace, owner and custom indexes, and keeps indexes right on update and delete', () => {
    const store = new Store<KubeObject>();
    store.addIndex('byLetter', (o) => [o.metadata?.name?.[0] ?? '']);
    store.upsert(obj('a', 'x1', '1', 'u1'));
    store.upsert(obj('a', 'y1', '2'));
    store.upsert(obj('b', 'x2', '3', 'u1'));
    expect(
      store
        .byIndex(byNamespace, 'a')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['x1', 'y1']);
    expect(
      store
        .byIndex(byOwnerUid, 'u1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['x1', 'x2']);
    expect(store.byIndex('byLetter', 'x')).toHaveLength(2);
    store.upsert(obj('b', 'x2', '4')); // owner reference dropped
    expect(store.byIndex(byOwnerUid, 'u1').map((o) => o.metadata?.name)).toEqual(['x1']);
    store.remove(obj('a', 'x1', '5'));
    expect(store.byIndex(byOwnerUid, 'u1')).toEqual([]);
  });

  it('turns a relist into the adds, updates and deletes it implies, within its scope', () => {
    const store = new Store<KubeObject>();
    const seen: string[] = [];
    store.upsert(obj('a', 'kept', '1'));
    store.upsert(obj('a', 'changed', '1'));
    store.upsert(obj('a', 'gone', '1'));
    store.upsert(obj('b', 'other-namespace', '1'));
    store.listen({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
      onUpdate: (_old, o) => seen.push(`update ${o.metadata?.name}`),
      onDelete: (o) => seen.push(`delete ${o.metadata?.name}`),
    });
    store.replace([obj('a', 'kept', '1'), obj('a', 'changed', '2'), obj('a', 'new', '1')], 'a');
    expect(seen.sort()).toEqual(['add new', 'delete gone', 'update changed']);
    expect(store.keys().sort()).toEqual(['a/changed', 'a/kept', 'a/new', 'b/other-namespace']);
  });
});

// isApplied on managedFields trees of the shapes the API server writes (f:, k:, v:, i:, '.').
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/resource-type.ts';
import { isApplied, keepOwnManagedFields, sameValues } from './applied-state.ts';

const manager = { fieldManager: 'op' };

function live(fields: object, body: object, subresource?: string): KubeObject {
  return {
    metadata: {
      name: 'x',
      managedFields: [
        { manager: 'someone-else', operation: 'Update', fieldsV1: { 'f:data': { 'f:other': {} } } },
        { manager: 'op', operation: 'Apply', ...(subresource ? { subresource } : {}), fieldsV1: fields },
      ],
    },
    ...body,
  };
}

describe('isApplied', () => {
  const podSpec = {
    nodeSelector: { disk: 'ssd' },
    tolerations: [{ key: 'a', operator: 'Exists' }],
    containers: [{ name: 'main', ports: [{ containerPort: 80 }] }],
  };
  const owned = {
    'f:spec': {
      'f:nodeSelector': { 'f:disk': {} },
      'f:tolerations': {},
      'f:containers': {
        'k:{"name":"main"}': {
          '.': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
        },
      },
    },
  };
  const liveSpec = {
    ...podSpec,
    containers: [{ name: 'main', ports: [{ containerPort: 80, protocol: 'TCP' }], image: 'defaulted' }],
  };

  it('holds when every owned field is still desired with the same value (server defaults ignored)', () => {
    expect(isApplied({ spec: podSpec }, live(owned, { spec: liveSpec }), manager)).toBe(true);
  });

  it('sees a field dropped from the desired object that the manager still owns', () => {
    const withoutSelector = { ...podSpec, nodeSelector: undefined };
    expect(isApplied({ spec: withoutSelector }, live(owned, { spec: liveSpec }), manager)).toBe(false);
  });

  it('sees a dropped list item, keyed (k:) or set (v:)', () => {
    const noPort = { ...podSpec, containers: [{ name: 'main', ports: [] }] };
    expect(isApplied({ spec: noPort }, live(owned, { spec: liveSpec }), manager)).toBe(false);
    const finalizers = { 'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } } };
    const obj = live(finalizers, {});
    obj.metadata = { ...obj.metadata, finalizers: ['a', 'b'] };
    expect(isApplied({ metadata: { finalizers: ['a', 'b'] } }, obj, manager)).toBe(true);
    expect(isApplied({ metadata: { finalizers: ['a'] } }, obj, manager)).toBe(false);
  });

  it('sees a changed value', () => {
    const changed = { ...podSpec, nodeSelector: { disk: 'hdd' } };
    expect(isApplied({ spec: changed }, live(owned, { spec: liveSpec }), manager)).toBe(false);
  });

  it('is false for an object this manager never applied, and reads the status entry for status', () => {
    const obj: KubeObject = { metadata: { name: 'x' } };
    expect(isApplied({}, obj, manager)).toBe(false);
    const withStatus = live(
      { 'f:status': { 'f:ready': {}, 'f:reason': {} } },
      { status: { ready: 1, reason: 'r' } },
      'status',
    );
    expect(
      isApplied({ status: { ready: 1, reason: 'r' } }, withStatus, { ...manager, subresource: 'status' }),
    ).toBe(true);
    expect(isApplied({ status: { ready: 1 } }, withStatus, { ...manager, subresource: 'status' })).toBe(
      false,
    );
    expect(isApplied({ status: { ready: 1, reason: 'r' } }, withStatus, manager)).toBe(false);
  });
});

describe('sameValues', () => {
  it('compares resource quantities by value, other strings exactly', () => {
    expect(
      sameValues({ limits: { cpu: '0.5', memory: '1024Mi' } }, { limits: { cpu: '500m', memory: '1Gi' } }),
    ).toBe(true);
    expect(sameValues({ limits: { cpu: '0.5' } }, { limits: { cpu: '600m' } })).toBe(false);
    expect(sameValues({ image: '1.0' }, { image: '1' })).toBe(false);
  });
});

describe('keepOwnManagedFields', () => {
  it("keeps only the manager's own Apply entries, and the rest of the object as it is", () => {
    const obj = live({ 'f:data': {} }, { data: { a: '1' } });
    const kept = keepOwnManagedFields('op')(obj);
    expect(kept.metadata?.managedFields?.map((e) => e.manager)).toEqual(['op']);
    expect(kept).toMatchObject({ metadata: { name: 'x' }, data: { a: '1' } });
    expect(isApplied({ data: { a: '1' } }, kept, manager)).toBe(true);
    expect(obj.metadata?.managedFields).toHaveLength(2); // the input is not changed
  });

  it("keeps every named manager's Apply entries, so a secondary field manager sees its removals", () => {
    const obj = live({ 'f:data': { 'f:a': {} } }, { data: { a: '1', routed: 'yes' } });
    obj.metadata?.managedFields?.push({
      manager: 'op-routing',
      operation: 'Apply',
      fieldsV1: { 'f:data': { 'f:routed': {} } },
    });
    const kept = keepOwnManagedFields(['op', 'op-routing'])(obj);
    expect(kept.metadata?.managedFields?.map((e) => e.manager)).toEqual(['op', 'op-routing']);
    const routing = { fieldManager: 'op-routing' };
    expect(isApplied({ data: { routed: 'yes' } }, kept, routing)).toBe(true);
    // The routing manager stops setting data.routed: not converged, the apply must drop it.
    expect(isApplied({ data: {} }, kept, routing)).toBe(false);
    // Without its entry the routing client never sees convergence: it would write on every reconcile.
    expect(isApplied({ data: { routed: 'yes' } }, keepOwnManagedFields('op')(obj), routing)).toBe(false);
  });
});

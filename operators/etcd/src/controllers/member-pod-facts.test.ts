// The pods' side of a member's readiness and of a restore's end, from the pods as cached.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { memberPodFacts } from './member-pod-facts.ts';

const member = (name: string) => ({ name, peerUrl: `http://${name}:2380`, clientUrl: `http://${name}:2379` });
const ready = { conditions: [{ type: 'Ready', status: 'True' }] };
const pods: Record<string, V1Pod> = {
  'orders-0': { metadata: { name: 'orders-0' }, status: ready, spec: { containers: [] } },
  'orders-1': {
    metadata: { name: 'orders-1', deletionTimestamp: new Date() },
    status: ready,
    spec: { containers: [] },
  },
  'orders-2': { metadata: { name: 'orders-2' }, status: {}, spec: { containers: [] } },
  'orders-4': {
    metadata: { name: 'orders-4' },
    status: ready,
    spec: { containers: [], initContainers: [{ name: 'fetch-backup' }] },
  },
};

describe('memberPodFacts', () => {
  it('names the members without a Ready pod, with why, and those still in the pod that restored them', () => {
    const facts = memberPodFacts(
      ['orders-0', 'orders-1', 'orders-2', 'orders-3', 'orders-4'].map(member),
      (name) => pods[name],
    );
    expect(Object.fromEntries(facts.podsNotReady)).toEqual({
      'orders-1': 'its pod is being deleted',
      'orders-2': 'its pod is not Ready',
      'orders-3': 'no pod',
    });
    expect(facts.restoreCarriedBy).toEqual(['orders-4']);
  });
});

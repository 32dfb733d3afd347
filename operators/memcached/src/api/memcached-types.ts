// TypeScript types of the Memcached API, derived from the TypeBox schemas (never written by hand).
import type { Static } from '@sinclair/typebox';
import { resourceType, type KubeObject } from '@homeostat/reconcile';
import { group, version, type MemcachedSpec, type MemcachedStatus } from './memcached-schema.ts';

export type MemcachedSpecFields = Static<typeof MemcachedSpec>;

export type MemcachedStatusFields = Static<typeof MemcachedStatus>;

/** A Memcached as read from the API server (defaults applied, so every defaulted field is set). */
export interface Memcached extends KubeObject {
  spec: MemcachedSpecFields;
  status?: MemcachedStatusFields;
}

/** The Memcached kind, for the client and the caches. */
export const memcacheds = resourceType<Memcached>(`${group}/${version}`, 'Memcached', 'memcacheds');

/** Condition types, each with one meaning (see the operator README). */
export const conditionTypes = {
  /** Enough pods are ready to serve: at least size minus the PDB's maxUnavailable, and at least one. */
  available: 'Available',
  /** The operator is rolling out a change, scaling, or waiting for pods to become ready. */
  progressing: 'Progressing',
  /** Something needs a human: the desired state could not be written, or a rollout stalled. */
  degraded: 'Degraded',
} as const;

// TypeScript types of the EtcdCluster API, derived from the TypeBox schemas (never written by hand).
import type { Static } from '@sinclair/typebox';
import { resourceType, type KubeObject } from '@homeostat/reconcile';
import { apiVersion } from './api-group.ts';
import type { EtcdClusterSpec, EtcdClusterStatus } from './etcd-cluster-schema.ts';

export type EtcdClusterSpecFields = Static<typeof EtcdClusterSpec>;

export type EtcdClusterStatusFields = Static<typeof EtcdClusterStatus>;

export type EtcdClusterPhase = NonNullable<EtcdClusterStatusFields['phase']>;
export type RecoveryStatusFields = NonNullable<EtcdClusterStatusFields['recovery']>;
export type MemberStatusFields = NonNullable<EtcdClusterStatusFields['members']>[number];

/** An EtcdCluster as read from the API server (defaults applied, so every defaulted field is set). */
export interface EtcdCluster extends KubeObject {
  spec: EtcdClusterSpecFields;
  status?: EtcdClusterStatusFields;
}

/** The EtcdCluster kind, for the client and the caches. */
export const etcdClusters = resourceType<EtcdCluster>(apiVersion, 'EtcdCluster', 'etcdclusters');

/** Condition types of an EtcdCluster, each with one meaning (see the operator README). */
export const clusterConditionTypes = {
  /** A majority of voting members is ready: the cluster serves reads and writes. */
  available: 'Available',
  /** The operator is changing something: creating, scaling, upgrading, restoring, or waiting for a member. */
  progressing: 'Progressing',
  /** Something needs a human: a spec the operator cannot carry out, a write refused, a member failing. */
  degraded: 'Degraded',
  /** Members are being added or removed, one at a time. */
  scaling: 'Scaling',
  /** Members are being moved to a new version, one at a time. */
  upgrading: 'Upgrading',
  /** The cluster is being created from a backup. */
  restoring: 'Restoring',
  /** Fewer than a majority of voting members are up: etcd refuses every write. */
  quorumLost: 'QuorumLost',
  /** The operator is making the cluster again from a backup after losing quorum (spec.recovery). */
  recovering: 'Recovering',
} as const;

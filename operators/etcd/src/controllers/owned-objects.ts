// The objects this operator made, read from label-selected informers: only what carries its
// managed-by label is watched and cached, never every pod, claim or Service in the cluster.
import type {
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import {
  builtin,
  type Informer,
  type KubeObject,
  type Manager,
  type ResourceType,
} from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { managedSelector, nameOf, namespaceOf } from './cluster-names.ts';

/** The kinds the operator makes, each with its label-selected informer. */
export const ownedKinds = [
  builtin.pods,
  builtin.persistentVolumeClaims,
  builtin.services,
  builtin.podDisruptionBudgets,
  builtin.secrets,
] as const;

/** Reads what the operator made for clusters, from the shared label-selected caches. */
export class OwnedObjects {
  readonly #pods: Informer<V1Pod>;
  readonly #claims: Informer<V1PersistentVolumeClaim>;
  readonly #services: Informer<V1Service>;
  readonly #pdbs: Informer<V1PodDisruptionBudget>;
  readonly #secrets: Informer<V1Secret>;

  constructor(manager: Manager) {
    const informer = <T extends KubeObject>(type: ResourceType<T>) =>
      manager.cache.informer(type, { labelSelector: managedSelector });
    this.#pods = informer(builtin.pods);
    this.#claims = informer(builtin.persistentVolumeClaims);
    this.#services = informer(builtin.services);
    this.#pdbs = informer(builtin.podDisruptionBudgets);
    // Only the Secrets this operator generated (labelled): never every Secret in the cluster.
    this.#secrets = informer(builtin.secrets);
  }

  secret(cluster: EtcdCluster, name: string): V1Secret | undefined {
    return this.#secrets.store.get(`${namespaceOf(cluster)}/${name}`);
  }

  pod(cluster: EtcdCluster, name: string): V1Pod | undefined {
    return this.#pods.store.get(`${namespaceOf(cluster)}/${name}`);
  }

  claim(cluster: EtcdCluster, name: string): V1PersistentVolumeClaim | undefined {
    return this.#claims.store.get(`${namespaceOf(cluster)}/${name}`);
  }

  service(cluster: EtcdCluster, name: string): V1Service | undefined {
    return this.#services.store.get(`${namespaceOf(cluster)}/${name}`);
  }

  podDisruptionBudget(cluster: EtcdCluster, name: string): V1PodDisruptionBudget | undefined {
    return this.#pdbs.store.get(`${namespaceOf(cluster)}/${name}`);
  }

  /** Member pods of `cluster` (its instance label), whoever's they are by ordinal. */
  podsOf(cluster: EtcdCluster): V1Pod[] {
    return this.#of(this.#pods, cluster);
  }

  claimsOf(cluster: EtcdCluster): V1PersistentVolumeClaim[] {
    return this.#of(this.#claims, cluster);
  }

  /** The Secrets the operator generated for `cluster` (its instance label). */
  secretsOf(cluster: EtcdCluster): V1Secret[] {
    return this.#of(this.#secrets, cluster);
  }

  #of<T extends KubeObject>(informer: Informer<T>, cluster: EtcdCluster): T[] {
    return informer.store
      .byIndex('namespace', namespaceOf(cluster))
      .filter((o) => o.metadata?.labels?.['app.kubernetes.io/instance'] === nameOf(cluster));
  }
}

// Names, labels and metadata of everything the operator makes for one EtcdCluster (ADR 0301).
import { controllerReference } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';

/** The field manager, event reporter and `app.kubernetes.io/managed-by` value of this operator. */
export const operatorName = 'etcd-operator';
/** The operator image the chart installs by default (its restore agent runs in member pods). */
export const defaultOperatorImage = 'ghcr.io/homeostat/etcd-operator:0.1.0';

/** Annotation on a member's claim and pod: the etcd member ID (hex) the data belongs to, or `seed`. */
export const memberIdAnnotation = 'etcd.homeostat.dev/member-id';
/** The claim of member 0 made before the cluster has an ID. */
export const seedMemberId = 'seed';
/** Label naming the member a pod or claim belongs to. */
export const memberLabel = 'etcd.homeostat.dev/member';

export const clientPort = 2379;
export const peerPort = 2380;
/** Plain-HTTP /metrics, /livez and /readyz (etcd's --listen-metrics-urls), for probes and scraping. */
export const metricsPort = 2381;

export const nameOf = (cluster: EtcdCluster): string => cluster.metadata?.name ?? '';
export const namespaceOf = (cluster: EtcdCluster): string => cluster.metadata?.namespace ?? 'default';

/** Member `ordinal` of `cluster`: its etcd name and its pod's name. */
export const memberName = (cluster: string, ordinal: number): string => `${cluster}-${ordinal}`;

/** The ordinal in a member name of `cluster`, or undefined for a name that is not one. */
export function ordinalOf(cluster: string, member: string): number | undefined {
  if (!member.startsWith(`${cluster}-`)) return undefined;
  const rest = member.slice(cluster.length + 1);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/** Members the spec asks for, in order. */
export function desiredMemberNames(cluster: EtcdCluster): string[] {
  return Array.from({ length: cluster.spec.size }, (_, i) => memberName(nameOf(cluster), i));
}

/** The PersistentVolumeClaim holding a member's data directory. */
export const claimName = (member: string): string => `${member}-data`;
/** Headless Service that gives every member a DNS name, ready or not. */
export const peerServiceName = (cluster: string): string => `${cluster}-peers`;
/** Service clients connect to: ready members only. */
export const clientServiceName = (cluster: string): string => cluster;

/** The Secrets of a cluster's TLS: generated ones are named after the cluster; provided ones as given. */
export interface TlsSecretNames {
  readonly server: string;
  readonly peer: string;
  readonly client: string;
}

/** Secret holding the CA the operator generated for a cluster (ca.crt, ca.key). */
export const caSecretName = (cluster: string): string => `${cluster}-ca`;

/** The TLS Secrets of `cluster`, or undefined when TLS is off. */
export function tlsSecretNames(cluster: EtcdCluster): TlsSecretNames | undefined {
  const { tls } = cluster.spec;
  if (!tls.enabled) return undefined;
  if (tls.provided) {
    return {
      server: tls.provided.serverSecretName,
      peer: tls.provided.peerSecretName,
      client: tls.provided.clientSecretName,
    };
  }
  const name = nameOf(cluster);
  return { server: `${name}-server-tls`, peer: `${name}-peer-tls`, client: `${name}-client-tls` };
}

/** Labels that pick one cluster's member pods (Service and PDB selectors). */
export function selectorLabels(cluster: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'etcd', 'app.kubernetes.io/instance': cluster };
}

/** Selector labels plus the labels that say who made the object and why. */
export function clusterLabels(cluster: string): Record<string, string> {
  return {
    ...selectorLabels(cluster),
    'app.kubernetes.io/part-of': 'homeostat',
    'app.kubernetes.io/managed-by': operatorName,
  };
}

/** Labels of one member's pod and claim. */
export function memberLabels(cluster: string, member: string): Record<string, string> {
  return { ...clusterLabels(cluster), 'app.kubernetes.io/component': 'member', [memberLabel]: member };
}

/** The selector as `kubectl get -l` and the scale subresource take it. */
export function selectorString(cluster: string): string {
  return Object.entries(selectorLabels(cluster))
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** Label selector of the operator's informers: only what this operator made. */
export const managedSelector = `app.kubernetes.io/name=etcd,app.kubernetes.io/managed-by=${operatorName}`;

/** Metadata of an object owned by `cluster`: its namespace, labels and controller reference. */
export function ownedMeta(cluster: EtcdCluster, name: string, labels = clusterLabels(nameOf(cluster))) {
  return {
    name,
    namespace: namespaceOf(cluster),
    labels,
    ownerReferences: [controllerReference(cluster)],
  };
}

/**
 * The initial-cluster token of the cluster's current etcd cluster: the EtcdCluster's UID keeps two
 * clusters of one name apart, and each recovery from a backup (status.recovery.generation) makes
 * a new etcd cluster with new IDs even though its members have the same names and URLs.
 */
export function clusterToken(cluster: EtcdCluster): string {
  const base = cluster.metadata?.uid ?? nameOf(cluster);
  const generation = cluster.status?.recovery?.generation ?? 0;
  return generation > 0 ? `${base}-${generation}` : base;
}

// How the operator reaches a cluster's instances over SQL: as its own role (the operator Secret),
// with TLS verified against the cluster's CA (verify-full) to every instance whose pod mounts the
// server certificate; a pod made before the operator issued one still speaks plaintext, and
// demanding TLS of it would count a healthy instance as unreachable (ADR 0214). The cluster
// controller probes and fails over through it; the drill controller counts rows through it.
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import type { KubeObject } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { ConnectOptions, InstanceEndpoint } from '../instance/instance.ts';
import { instanceHost, postgresPort, secretNames, tlsSecretNames } from './cluster-names.ts';
import { secretText } from './cluster-tls.ts';
import { tlsVolume } from './desired-pod.ts';
import { labelKeys } from './operand-labels.ts';

/** How the operator reaches the instances in this reconcile. */
export interface InstanceAccess {
  readonly endpointOf: (instance: string) => InstanceEndpoint;
  readonly credentials: { readonly user: string; readonly password: string };
  readonly connect: ConnectOptions;
}

/** Where the operator reaches an instance, when not its DNS name through the headless Service (tests). */
export type InstanceEndpointOf = (cluster: PostgresCluster, instance: string) => InstanceEndpoint;

/**
 * The access to `cluster`'s instances given its pods and Secrets (by name); undefined until the
 * operator's Secret is known.
 */
export function instanceAccess(
  cluster: PostgresCluster,
  pods: ReadonlyMap<string, V1Pod>,
  secrets: ReadonlyMap<string, V1Secret>,
  connect: ConnectOptions,
  endpointOverride?: InstanceEndpointOf,
): InstanceAccess | undefined {
  const name = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? 'default';
  const operatorSecret = secrets.get(secretNames(name).operator);
  const user = secretText(operatorSecret, 'username');
  const password = secretText(operatorSecret, 'password');
  if (!user || !password) return undefined;
  const ca = secretText(secrets.get(tlsSecretNames(name).ca), 'ca.crt');
  const servesTls = (instance: string) =>
    pods.get(instance)?.spec?.volumes?.some((v) => v.name === tlsVolume) ?? false;
  const endpointOf = (instance: string): InstanceEndpoint => {
    const endpoint = endpointOverride?.(cluster, instance) ?? {
      name: instance,
      host: instanceHost(name, namespace, instance),
      port: postgresPort,
    };
    return ca && servesTls(instance) ? { ...endpoint, ca } : endpoint;
  };
  return { endpointOf, credentials: { user, password }, connect };
}

/** The objects of cluster `name` (by its cluster label), by object name: what instanceAccess reads. */
export function ofClusterByName<T extends KubeObject>(objects: readonly T[], name: string): Map<string, T> {
  return new Map(
    objects
      .filter((o) => o.metadata?.labels?.[labelKeys.cluster] === name)
      .map((o) => [o.metadata?.name ?? '', o]),
  );
}

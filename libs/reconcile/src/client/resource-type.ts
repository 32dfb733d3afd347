import type {
  CoreV1Event,
  V1ConfigMap,
  V1Deployment,
  V1Lease,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicySpec,
  V1Namespace,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  EventsV1Event,
  V1CustomResourceDefinition,
} from '@kubernetes/client-node';

/** The metadata every object has; enough for caches, queues and owner references. */
export interface ObjectMeta {
  name?: string;
  /** A prefix the API server completes into a unique name (on create only). */
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: Date | string;
  creationTimestamp?: Date | string;
  ownerReferences?: OwnerReference[];
  /** Which field manager owns which fields (server-side apply bookkeeping). */
  managedFields?: ManagedFieldsEntry[];
}

/** One field manager's claim on an object's fields, as the API server records it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  /** '' (or absent) for the main resource, 'status' or 'scale' for a subresource. */
  subresource?: string;
  fieldsType?: string;
  /** The owned fields as a tree: `f:<field>`, `k:<list-map key>`, `v:<set value>`, `i:<index>`, `.` for "this node itself". */
  fieldsV1?: object;
  time?: Date | string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * Identifies a kind for the client and the caches. `T` is the object type it returns; it is
 * carried only by the type system.
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Never set; binds the object type to this descriptor. */
  readonly _type?: T;
}

/** Declares a kind: `resourceType<Memcached>('cache.homeostat.dev/v1alpha1', 'Memcached', 'memcacheds')`. */
export function resourceType<T extends KubeObject>(
  apiVersion: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType<T> {
  return { apiVersion, kind, plural, namespaced };
}

/** The API group of a kind ('' for the core group). */
export function groupOf(type: { apiVersion: string }): string {
  const slash = type.apiVersion.indexOf('/');
  return slash === -1 ? '' : type.apiVersion.slice(0, slash);
}

/** The collection path of a kind, in one namespace or (namespace undefined) across all. */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const base = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  if (type.namespaced && namespace)
    return `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  return `${base}/${type.plural}`;
}

/** The path of one object, optionally of a subresource such as `status` or `scale`. */
export function objectPath(
  type: ResourceType,
  name: string,
  namespace?: string,
  subresource?: string,
): string {
  if (type.namespaced && !namespace)
    throw new Error(`${type.kind} ${name} is namespaced: a namespace is required`);
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}

/**
 * A NetworkPolicy as the API server reads and writes it. The generated model names an ingress
 * rule's `from` `_from` (a reserved word in its generator) and renames it only through its own
 * serializer; this client sends and reads plain JSON, so the type carries the wire name.
 */
export type NetworkPolicy = Omit<V1NetworkPolicy, 'spec'> & {
  spec?: Omit<V1NetworkPolicySpec, 'ingress'> & {
    ingress?: (Omit<V1NetworkPolicyIngressRule, '_from'> & { from?: V1NetworkPolicyIngressRule['_from'] })[];
  };
};

/** Built-in kinds the operators use. */
export const builtin = {
  namespaces: resourceType<V1Namespace>('v1', 'Namespace', 'namespaces', false),
  configMaps: resourceType<V1ConfigMap>('v1', 'ConfigMap', 'configmaps'),
  secrets: resourceType<V1Secret>('v1', 'Secret', 'secrets'),
  services: resourceType<V1Service>('v1', 'Service', 'services'),
  serviceAccounts: resourceType<V1ServiceAccount>('v1', 'ServiceAccount', 'serviceaccounts'),
  pods: resourceType<V1Pod>('v1', 'Pod', 'pods'),
  persistentVolumeClaims: resourceType<V1PersistentVolumeClaim>(
    'v1',
    'PersistentVolumeClaim',
    'persistentvolumeclaims',
  ),
  coreEvents: resourceType<CoreV1Event>('v1', 'Event', 'events'),
  deployments: resourceType<V1Deployment>('apps/v1', 'Deployment', 'deployments'),
  statefulSets: resourceType<V1StatefulSet>('apps/v1', 'StatefulSet', 'statefulsets'),
  podDisruptionBudgets: resourceType<V1PodDisruptionBudget>(
    'policy/v1',
    'PodDisruptionBudget',
    'poddisruptionbudgets',
  ),
  networkPolicies: resourceType<NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies'),
  leases: resourceType<V1Lease>('coordination.k8s.io/v1', 'Lease', 'leases'),
  events: resourceType<EventsV1Event>('events.k8s.io/v1', 'Event', 'events'),
  customResourceDefinitions: resourceType<V1CustomResourceDefinition>(
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    false,
  ),
} as const;

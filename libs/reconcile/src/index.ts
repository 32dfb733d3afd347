// @homeostat/reconcile: the controller runtime every Homeostat operator is built on.
export {
  KubeClient,
  type ClientOptions,
  type CallOptions,
  type ApplyOutcome,
  type StatusOf,
  type ListOptions,
  type ListResult,
  type PatchType,
} from './client/kube-client.ts';
export {
  KubeApiError,
  NotFoundError,
  ConflictError,
  AlreadyExistsError,
  GoneError,
  InvalidError,
  NetworkError,
  PermanentError,
  isNotFound,
  isConflict,
  type ApiStatus,
} from './client/errors.ts';
export {
  builtin,
  resourceType,
  collectionPath,
  objectPath,
  groupOf,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  type ManagedFieldsEntry,
  type ResourceType,
  type NetworkPolicy,
} from './client/resource-type.ts';
export { KubeTransport, type RequestCounts } from './client/transport.ts';
export {
  clusterAccess,
  type ClusterAccess,
  type ClusterSource,
  type Credentials,
} from './client/cluster-access.ts';
export {
  loadKubeConfig,
  inCluster,
  fromKubeconfigFiles,
  KubeConfigError,
} from './client/kubeconfig-loader.ts';
export {
  withRetries,
  isRetryable,
  isCreateRetryable,
  defaultRetryPolicy,
  type RetryPolicy,
} from './client/retry.ts';
export { keyOf, parseKey, type ObjectKey } from './cache/object-key.ts';
export { Store, byNamespace, byOwnerUid, type IndexFunction, type StoreListener } from './cache/store.ts';
export { Reflector, type ReflectorOptions, type ReflectorStats } from './cache/reflector.ts';
export { Informer, type InformerOptions } from './cache/informer.ts';
export { InformerCache } from './cache/informer-cache.ts';
export { WorkQueue, type QueueObserver } from './queue/work-queue.ts';
export {
  ExponentialRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from './queue/rate-limiter.ts';
export {
  Controller,
  NotCachedError,
  watch,
  mappedKeys,
  type Watch,
  type ReconcileRequest,
  type ControllerOptions,
  type ReconcileContext,
  type ReconcileResult,
  type Reconcile,
  type Reconciler,
  type CacheReader,
  type WatchSpec,
} from './controller/controller.ts';
export { mapToLabelledOwner } from './controller/map-handlers.ts';
export { WriteBackoff, type Writes } from './controller/write-backoff.ts';
export {
  annotationChanged,
  generationChanged,
  labelsChanged,
  resourceVersionChanged,
  anyOf,
  type Predicate,
  type ChangeEvent,
} from './controller/predicates.ts';
export { Manager, type ManagerOptions } from './manager/manager.ts';
export { LeaderElector, type LeaderElectionOptions } from './manager/leader-election.ts';
export { ControllerMetrics } from './metrics/controller-metrics.ts';
export {
  Registry,
  Counter,
  Gauge,
  Histogram,
  type Labels,
  type MetricOptions,
  type MetricSnapshot,
  type MetricValue,
} from './metrics/prometheus.ts';
export { EventRecorder, type EventType, type RecordedEvent } from './events/event-recorder.ts';
export {
  setCondition,
  ConditionSchema,
  ConditionsSchema,
  findCondition,
  isConditionTrue,
  type Condition,
  type ConditionInput,
} from './helpers/conditions.ts';
export { conditionAsWritten, type WithConditions } from './helpers/condition-as-written.ts';
export { observedGenerationField, phaseField, conditionsField } from './helpers/status-schema.ts';
export { controllerReference, controllerOf, isControlledBy } from './helpers/owner-references.ts';
export { addFinalizer, removeFinalizer, hasFinalizer, isBeingDeleted } from './helpers/finalizers.ts';
export { hasReadyCondition, isPodReady } from './helpers/pod-readiness.ts';
export {
  buildCrd,
  type CrdOptions,
  type CrdVersion,
  type CustomResourceDefinition,
  type PrinterColumn,
  type ValidationRule,
} from './crd/crd-builder.ts';
export {
  quantitySchema,
  resourceRequirementsSchema,
  requestsWithinLimitsRules,
  TolerationSchema,
  affinitySchema,
  labelSelectorSchema,
  imageSchema,
  specRequiredRule,
  dnsLabelNameRule,
} from './crd/kubernetes-schemas.ts';
export { toCrdSchema, structuralProblems, type JsonSchema } from './crd/structural-schema.ts';
export {
  WriteFailure,
  assertOwnedOrAbsent,
  refusedWritesProblem,
  warnRefusedWrites,
  type WarningRecorder,
} from './helpers/write-failure.ts';
export { isSubset } from './helpers/desired-state.ts';
export {
  isApplied,
  ownedFields,
  sameValues,
  type AppliedStateOptions,
  type FieldSet,
} from './helpers/applied-state.ts';
export { quantityValue, sameResourceList } from './helpers/quantity.ts';

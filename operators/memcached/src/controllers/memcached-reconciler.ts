// The Memcached reconciler, in two phases: converge the objects (StatefulSet, headless Service,
// server-list ConfigMap, PodDisruptionBudget and NetworkPolicy by server-side apply, Events on
// scaling; a Deployment an older operator made is deleted once the StatefulSet serves), then report
// (status from the StatefulSet and its pods). The StatefulSet waits while a Secret it names is
// missing or incomplete: that is reported, with a Warning Event, and looked at again shortly. A
// refused write backs off on its own (ctx.writes, ADR 0603): it is reported, not thrown.
import type { V1ConfigMap, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  WriteFailure,
  assertOwnedOrAbsent,
  builtin,
  conditionAsWritten,
  isBeingDeleted,
  isControlledBy,
  warnRefusedWrites,
  type Informer,
  type KubeObject,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceType,
  type ReconcileRequest,
  type Reconciler,
} from '@homeostat/reconcile';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { memcacheds, type Memcached } from '../api/memcached-types.ts';
import { desiredStatefulSet, type DefaultImages } from './desired-statefulset.ts';
import { desiredNetworkPolicy } from './desired-network-policy.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredServersConfigMap } from './memcached-servers.ts';
import { desiredService } from './desired-service.ts';
import { replaceOldDeployment } from './old-deployment.ts';
import { memcachedStatus } from './memcached-status.ts';
import { checkReferencedSecrets, type ReferencedSecrets, type SecretProblem } from './referenced-secrets.ts';
import type { CacheGauges } from '../metrics/cache-gauges.ts';

/** How soon a missing or incomplete Secret is looked at again (Secrets are read, not watched). */
export const secretRetryMs = 30_000;
/** How often named Secrets are read again, so a rotated one rolls the pods without a spec change. */
export const secretRecheckMs = 5 * 60_000;

export interface MemcachedReconcilerOptions {
  /** Images for Memcacheds that do not name them. */
  readonly defaultImages: DefaultImages;
  /** The operator's per-Memcached gauges, fed from each reconcile's status. */
  readonly gauges?: CacheGauges;
}

/** What converging the objects left: the StatefulSet as now known, and a write refused on the way. */
interface Converged {
  readonly statefulSet: V1StatefulSet | undefined;
  readonly failure?: WriteFailure;
  /** Why the StatefulSet was left as it is: a Secret it names cannot be used. */
  readonly secretProblem?: SecretProblem;
}

export class MemcachedReconciler implements Reconciler<Memcached> {
  readonly #pods: Informer<V1Pod>;
  readonly #configMaps: Informer<V1ConfigMap>;
  readonly #options: MemcachedReconcilerOptions;

  /**
   * `pods`, `configMaps`: the operator's label-selected informers (never every pod or ConfigMap in
   * the cluster).
   */
  constructor(pods: Informer<V1Pod>, configMaps: Informer<V1ConfigMap>, options: MemcachedReconcilerOptions) {
    this.#pods = pods;
    this.#configMaps = configMaps;
    this.#options = options;
  }

  async reconcile(
    { object: memcached, namespace, name }: ReconcileRequest<Memcached>,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    // Deleted or being deleted: garbage collection removes what it owns (ownerReferences); its
    // series go with it.
    if (!memcached || isBeingDeleted(memcached)) {
      this.#options.gauges?.forget({ namespace: namespace ?? 'default', name });
      return undefined;
    }
    const check = await checkReferencedSecrets(memcached, ctx.client);
    const converged = await this.convergeObjects(memcached, ctx, check.ok ? check.secrets : undefined);
    const secretProblem = check.ok ? undefined : check.problem;
    if (secretProblem) await this.#warnOnce(memcached, secretProblem, ctx);
    await this.report(memcached, { ...converged, ...(secretProblem ? { secretProblem } : {}) }, ctx);
    // A refused write comes back when its own backoff ends (the controller requeues it); a name
    // someone else holds made no request, so the key backs off until it is freed.
    if (converged.failure && ctx.writes.failures.length === 0) throw converged.failure;
    if (secretProblem) return { requeueAfterMs: secretRetryMs };
    return memcached.spec.tls || memcached.spec.sasl ? { requeueAfterMs: secretRecheckMs } : undefined;
  }

  /** One Warning Event per problem: none while Degraded, as last written, already says it. */
  async #warnOnce(memcached: Memcached, problem: SecretProblem, ctx: ReconcileContext): Promise<void> {
    const said = (await conditionAsWritten(ctx.client, memcacheds, memcached, 'Degraded'))?.message;
    if (said !== problem.message) {
      await ctx.events.warning(memcached, problem.reason, 'ReadSecret', problem.message);
    }
  }

  /**
   * StatefulSet, Service, ConfigMap, PodDisruptionBudget and NetworkPolicy; a refusal stops here
   * and is reported. Without `secrets` (a named Secret cannot be used) the StatefulSet is left as it is.
   */
  async convergeObjects(
    memcached: Memcached,
    ctx: ReconcileContext,
    secrets: ReferencedSecrets | undefined,
  ): Promise<Converged> {
    try {
      const statefulSet = await applyObjects(memcached, ctx, this.#options.defaultImages, secrets);
      await applyServersConfigMap(memcached, ctx, this.#configMaps);
      await replaceOldDeployment(memcached, ctx, statefulSet);
      return { statefulSet };
    } catch (error) {
      if (!(error instanceof WriteFailure)) throw error;
      // Once per refusal: none while it waits out its backoff or while Degraded already says it.
      // As last written: the cache may not show the status the reconcile before wrote yet.
      const said = (await conditionAsWritten(ctx.client, memcacheds, memcached, 'Degraded'))?.message ?? '';
      await warnRefusedWrites(ctx.events, memcached, [error], said);
      const { name = '', namespace = 'default' } = memcached.metadata ?? {};
      return { statefulSet: ctx.cache.get(builtin.statefulSets, name, namespace), failure: error };
    }
  }

  /** Status from the StatefulSet and the pods, with the refused write if there was one. */
  async report(
    memcached: Memcached,
    { statefulSet, failure, secretProblem }: Converged,
    ctx: ReconcileContext,
  ): Promise<void> {
    const { name = '', namespace = 'default' } = memcached.metadata ?? {};
    const pods = this.#pods.store
      .byIndex('namespace', namespace)
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/instance'] === name);
    const status = memcachedStatus(memcached, {
      statefulSet,
      pods,
      ...(failure ? { writeError: { reason: failure.reason, message: failure.message } } : {}),
      ...(secretProblem ? { secretProblem } : {}),
    });
    this.#options.gauges?.observe(memcached, status);
    await ctx.client.applyStatusIfChanged(memcacheds, { metadata: { name, namespace }, status }, memcached);
  }
}

/**
 * Applies the StatefulSet (its Events; only given `secrets`), the Service, the PodDisruptionBudget
 * and the NetworkPolicy; throws a WriteFailure.
 */
async function applyObjects(
  memcached: Memcached,
  ctx: ReconcileContext,
  images: DefaultImages,
  secrets: ReferencedSecrets | undefined,
): Promise<V1StatefulSet | undefined> {
  const name = memcached.metadata?.name ?? '';
  const namespace = memcached.metadata?.namespace ?? 'default';
  const { cache, client, writes } = ctx;

  const currentStatefulSet = cache.get(builtin.statefulSets, name, namespace);
  assertOwnedOrAbsent(currentStatefulSet, memcached, 'StatefulSet');
  const statefulSet = secrets
    ? await applyStatefulSet(
        memcached,
        ctx,
        desiredStatefulSet(memcached, images, secrets),
        currentStatefulSet,
      )
    : currentStatefulSet;

  const service = desiredService(memcached);
  const currentService = cache.get(builtin.services, name, namespace);
  assertOwnedOrAbsent(currentService, memcached, 'Service');
  await writes.step(`applying Service ${name}`, () =>
    client.applyIfChanged(builtin.services, service, currentService),
  );

  await keepOptional(memcached, ctx, builtin.podDisruptionBudgets, desiredPodDisruptionBudget(memcached), {
    deletedReason: 'PodDisruptionBudgetDeleted',
    deletedBecause: `it is disabled or size is ${memcached.spec.size}`,
  });
  await keepOptional(memcached, ctx, builtin.networkPolicies, desiredNetworkPolicy(memcached), {
    deletedReason: 'NetworkPolicyDeleted',
    deletedBecause: 'spec.networkPolicy is unset, every pod may reach the cache',
  });
  return statefulSet;
}

/**
 * Applies the server-list ConfigMap; throws a WriteFailure. Only labelled ConfigMaps are cached, so
 * one missing there is looked up: a ConfigMap of that name someone else made is never taken over.
 */
async function applyServersConfigMap(
  memcached: Memcached,
  { client, writes }: ReconcileContext,
  configMaps: Informer<V1ConfigMap>,
): Promise<void> {
  const desired = desiredServersConfigMap(memcached);
  const { name = '', namespace = 'default' } = desired.metadata ?? {};
  const current =
    configMaps.store.get(`${namespace}/${name}`) ?? (await client.find(builtin.configMaps, name, namespace));
  assertOwnedOrAbsent(current, memcached, 'ConfigMap');
  await writes.step(`applying ConfigMap ${name}`, () =>
    client.applyIfChanged(builtin.configMaps, desired, current),
  );
}

/** Applies `statefulSet`, with an Event saying what changed; throws a WriteFailure. */
async function applyStatefulSet(
  memcached: Memcached,
  { client, events, writes }: ReconcileContext,
  statefulSet: V1StatefulSet,
  current: V1StatefulSet | undefined,
): Promise<V1StatefulSet | undefined> {
  const name = memcached.metadata?.name ?? '';
  const applied = await writes.step(`applying StatefulSet ${name}`, () =>
    client.applyIfChanged(builtin.statefulSets, statefulSet, current),
  );
  if (applied.written) {
    const before = current?.spec?.replicas;
    if (before === undefined) {
      await events.normal(
        memcached,
        'StatefulSetCreated',
        'Create',
        `created StatefulSet ${name} with ${memcached.spec.size} pods`,
      );
    } else if (before !== memcached.spec.size) {
      await events.normal(
        memcached,
        memcached.spec.size > before ? 'ScaledUp' : 'ScaledDown',
        'Scale',
        `scaled from ${before} to ${memcached.spec.size} pods`,
      );
    } else if (restartAsked(statefulSet) !== restartAsked(current)) {
      await events.normal(
        memcached,
        'RestartRequested',
        'Restart',
        `rolling the pods of StatefulSet ${name} one at a time (${restartedAtAnnotation}=${restartAsked(statefulSet) ?? 'none'})`,
      );
    } else {
      await events.normal(memcached, 'StatefulSetUpdated', 'Update', `updated StatefulSet ${name}`);
    }
  }
  return applied.object;
}

/** The restart request a StatefulSet's pod template carries. */
const restartAsked = (statefulSet: V1StatefulSet | undefined): string | undefined =>
  statefulSet?.spec?.template.metadata?.annotations?.[restartedAtAnnotation];

/**
 * An object the spec may ask for or not (the PodDisruptionBudget, the NetworkPolicy): applied when
 * `desired` is defined, deleted (with a Normal Event saying why) when not and the operator made it.
 */
async function keepOptional<T extends KubeObject>(
  memcached: Memcached,
  { cache, client, events, writes }: ReconcileContext,
  type: ResourceType<T>,
  desired: T | undefined,
  deletion: { deletedReason: string; deletedBecause: string },
): Promise<void> {
  const name = memcached.metadata?.name ?? '';
  const namespace = memcached.metadata?.namespace ?? 'default';
  const current = cache.get(type, name, namespace);
  if (desired) {
    assertOwnedOrAbsent(current, memcached, type.kind);
    await writes.step(`applying ${type.kind} ${name}`, () => client.applyIfChanged(type, desired, current));
  } else if (current && isControlledBy(current, memcached)) {
    await writes.step(`deleting ${type.kind} ${name}`, () =>
      client.delete(type, name, namespace, { uid: current.metadata?.uid ?? '' }),
    );
    await events.normal(
      memcached,
      deletion.deletedReason,
      'Delete',
      `deleted ${type.kind} ${name}: ${deletion.deletedBecause}`,
    );
  }
}

// The Memcached reconciler, in two phases: converge the objects (Deployment, headless Service and
// PodDisruptionBudget by server-side apply, Events on scaling), then report (status from the
// Deployment and its pods). The Deployment waits while a Secret it names is missing or incomplete:
// that is reported, with a Warning Event, and looked at again shortly. A refused write backs off on
// its own (ctx.writes, ADR 0603): it is reported, not thrown.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
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
import { desiredDeployment, type DefaultImages } from './desired-deployment.ts';
import { desiredNetworkPolicy } from './desired-network-policy.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredService } from './desired-service.ts';
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

/** What converging the objects left: the Deployment as now known, and a write refused on the way. */
interface Converged {
  readonly deployment: V1Deployment | undefined;
  readonly failure?: WriteFailure;
  /** Why the Deployment was left as it is: a Secret it names cannot be used. */
  readonly secretProblem?: SecretProblem;
}

export class MemcachedReconciler implements Reconciler<Memcached> {
  readonly #pods: Informer<V1Pod>;
  readonly #options: MemcachedReconcilerOptions;

  /** `pods`: the operator's label-selected pod informer (never every pod in the cluster). */
  constructor(pods: Informer<V1Pod>, options: MemcachedReconcilerOptions) {
    this.#pods = pods;
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
   * Deployment, Service and PodDisruptionBudget; a refusal stops here and is reported. Without
   * `secrets` (a named Secret cannot be used) the Deployment is left as it is.
   */
  async convergeObjects(
    memcached: Memcached,
    ctx: ReconcileContext,
    secrets: ReferencedSecrets | undefined,
  ): Promise<Converged> {
    try {
      return { deployment: await applyObjects(memcached, ctx, this.#options.defaultImages, secrets) };
    } catch (error) {
      if (!(error instanceof WriteFailure)) throw error;
      // Once per refusal: none while it waits out its backoff or while Degraded already says it.
      // As last written: the cache may not show the status the reconcile before wrote yet.
      const said = (await conditionAsWritten(ctx.client, memcacheds, memcached, 'Degraded'))?.message ?? '';
      await warnRefusedWrites(ctx.events, memcached, [error], said);
      const { name = '', namespace = 'default' } = memcached.metadata ?? {};
      return { deployment: ctx.cache.get(builtin.deployments, name, namespace), failure: error };
    }
  }

  /** Status from the Deployment and the pods, with the refused write if there was one. */
  async report(
    memcached: Memcached,
    { deployment, failure, secretProblem }: Converged,
    ctx: ReconcileContext,
  ): Promise<void> {
    const { name = '', namespace = 'default' } = memcached.metadata ?? {};
    const pods = this.#pods.store
      .byIndex('namespace', namespace)
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/instance'] === name);
    const status = memcachedStatus(memcached, {
      deployment,
      pods,
      ...(failure ? { writeError: { reason: failure.reason, message: failure.message } } : {}),
      ...(secretProblem ? { secretProblem } : {}),
    });
    this.#options.gauges?.observe(memcached, status);
    await ctx.client.applyStatusIfChanged(memcacheds, { metadata: { name, namespace }, status }, memcached);
  }
}

/**
 * Applies the Deployment (its Events; only given `secrets`), the Service, the PodDisruptionBudget
 * and the NetworkPolicy; throws a WriteFailure.
 */
async function applyObjects(
  memcached: Memcached,
  ctx: ReconcileContext,
  images: DefaultImages,
  secrets: ReferencedSecrets | undefined,
): Promise<V1Deployment | undefined> {
  const name = memcached.metadata?.name ?? '';
  const namespace = memcached.metadata?.namespace ?? 'default';
  const { cache, client, writes } = ctx;

  const currentDeployment = cache.get(builtin.deployments, name, namespace);
  assertOwnedOrAbsent(currentDeployment, memcached, 'Deployment');
  const deployment = secrets
    ? await applyDeployment(memcached, ctx, desiredDeployment(memcached, images, secrets), currentDeployment)
    : currentDeployment;

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
  return deployment;
}

/** Applies `deployment`, with an Event saying what changed; throws a WriteFailure. */
async function applyDeployment(
  memcached: Memcached,
  { client, events, writes }: ReconcileContext,
  deployment: V1Deployment,
  currentDeployment: V1Deployment | undefined,
): Promise<V1Deployment | undefined> {
  const name = memcached.metadata?.name ?? '';
  const applied = await writes.step(`applying Deployment ${name}`, () =>
    client.applyIfChanged(builtin.deployments, deployment, currentDeployment),
  );
  if (applied.written) {
    const before = currentDeployment?.spec?.replicas;
    if (before === undefined) {
      await events.normal(
        memcached,
        'DeploymentCreated',
        'Create',
        `created Deployment ${name} with ${memcached.spec.size} pods`,
      );
    } else if (before !== memcached.spec.size) {
      await events.normal(
        memcached,
        memcached.spec.size > before ? 'ScaledUp' : 'ScaledDown',
        'Scale',
        `scaled from ${before} to ${memcached.spec.size} pods`,
      );
    } else if (restartAsked(deployment) !== restartAsked(currentDeployment)) {
      await events.normal(
        memcached,
        'RestartRequested',
        'Restart',
        `rolling the pods of Deployment ${name} as its strategy allows (${restartedAtAnnotation}=${restartAsked(deployment) ?? 'none'})`,
      );
    } else {
      await events.normal(memcached, 'DeploymentUpdated', 'Update', `updated Deployment ${name}`);
    }
  }
  return applied.object;
}

/** The restart request a Deployment's pod template carries. */
const restartAsked = (deployment: V1Deployment | undefined): string | undefined =>
  deployment?.spec?.template.metadata?.annotations?.[restartedAtAnnotation];

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

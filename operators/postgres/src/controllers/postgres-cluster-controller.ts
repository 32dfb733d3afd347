// The PostgreSQLCluster reconciler: the objects a cluster is made of (converge-objects.ts), a turn
// of the failover engine (run-failover.ts) with its state in the status, then the observed status,
// conditions and Events. It probes the instances on every reconcile and asks to be called again
// after `probeIntervalMs`, so a primary's failure is seen without any Kubernetes event. A write the
// API server refuses never stops that: it backs off on its own (ctx.writes) and the status says
// so, while probing and failing over go on every turn (ADR 0603).
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import {
  builtin,
  findCondition,
  generationChanged,
  isBeingDeleted,
  mapToLabelledOwner,
  refusedWritesProblem,
  warnRefusedWrites,
  KubeClient,
  watch,
  type Controller,
  type KubeObject,
  type Manager,
  type ReconcileContext,
} from '@homeostat/reconcile';
import {
  conditionTypes,
  postgresClusters,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../api/postgres-versions.ts';
import { defaultConnectOptions, type ConnectOptions, type InstanceEndpoint } from '../instance/instance.ts';
import type { Lsn } from '../instance/lsn.ts';
import { stillAnswers } from '../instance/observe.ts';
import { setSuperuserAccess } from '../instance/control.ts';
import { superuserName } from './desired-secrets.ts';
import type { EngineEvent } from '../failover/outcomes.ts';
import { archivingReport, primaryArchiving } from './archiving-status.ts';
import { ClusterMetrics } from './cluster-metrics.ts';
import { clusterStatus, newlyKeptAside, type ClusterObservation } from './cluster-status.ts';
import { instanceFailures } from './instance-failures.ts';
import {
  instanceHost,
  instanceName,
  instanceNames,
  ordinalOf,
  postgresPort,
  secretNames,
  tlsSecretNames,
} from './cluster-names.ts';
import { convergeObjects } from './converge-objects.ts';
import { tlsVolume } from './desired-pod.ts';
import { retainedInstances } from './retained-claims.ts';
import { primaryOf } from './missing-pod-role.ts';
import { countsFromStatus, failoverFieldManager, stateFromStatus } from './failover-status.ts';
import { podWorld } from './kubernetes-world.ts';
import { labelKeys, managedSelector, routingFieldManager } from './operand-labels.ts';
import { nextRolloutStep, restartForRollout } from './rolling-restart.ts';
import type { SeenPositions } from './adopt-retained.ts';
import { runFailover, type FailoverRunResult } from './run-failover.ts';
import { WriteFailure } from '@homeostat/reconcile';

export interface PostgresClusterControllerOptions {
  /** The image of each supported PostgreSQL version, for clusters that name none. */
  readonly imageFor: (version: MajorVersion) => string;
  readonly maxConcurrentReconciles?: number;
  /** How often a cluster's instances are probed (default 500 ms). */
  readonly probeIntervalMs?: number;
  /** Where the operator reaches an instance; default its DNS name through the headless Service. */
  readonly instanceEndpoint?: (cluster: PostgresCluster, instance: string) => InstanceEndpoint;
  readonly connect?: ConnectOptions;
  /** A replica further behind than this is never promoted (default 16 MiB). */
  readonly maxLagBytes?: bigint;
  /** How long a failover waits for an eligible replica before the old primary is brought back. */
  readonly electionTimeoutMs?: number;
}

const clusterLabel = labelKeys.cluster;

function byName<T extends KubeObject>(objects: readonly T[]): Map<string, T> {
  return new Map(objects.map((o) => [o.metadata?.name ?? '', o]));
}

function decoded(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

const clusterOf = mapToLabelledOwner(clusterLabel);

/**
 * Inside the cluster an instance answers a connection in milliseconds; one that does not within
 * half a second is gone, cut off or starved. A probe of a cut-off primary costs this much, so it
 * bounds how soon its failure is seen (a slow answer alone never fails over: the primary must
 * stay failing for `failoverDelay`).
 */
const operatorConnectOptions: ConnectOptions = { ...defaultConnectOptions, connectTimeoutMs: 500 };

/** Engine events worth a Kubernetes Event on the cluster: reason, type. */
const eventReasons: Partial<Record<EngineEvent['type'], [string, 'Normal' | 'Warning']>> = {
  'failover-started': ['FailoverStarted', 'Warning'],
  'switchover-started': ['SwitchoverStarted', 'Normal'],
  fenced: ['Fenced', 'Normal'],
  promoted: ['Promoted', 'Normal'],
  reinstating: ['Reinstating', 'Warning'],
  routed: ['Routed', 'Normal'],
  'rejoin-requested': ['Rejoining', 'Normal'],
  'slots-dropped': ['ReplicationSlotsDropped', 'Normal'],
  'writes-restored': ['WritesRestored', 'Normal'],
  'still-read-only': ['PrimaryStillReadOnly', 'Warning'],
};

/** What a reconcile's turn of the engine leaves: no view when the operator has no credentials yet. */
type EngineTurn = Omit<FailoverRunResult, 'view'> & { view: FailoverRunResult['view'] | undefined };

/** Adds the PostgreSQLCluster controller to `manager`. */
export function addPostgresClusterController(
  manager: Manager,
  options: PostgresClusterControllerOptions,
): Controller<PostgresCluster> {
  // Only what this operator made is cached, never every pod, claim or Secret of the cluster.
  const selector = { labelSelector: managedSelector };
  const pods = manager.cache.informer(builtin.pods, selector);
  const claims = manager.cache.informer(builtin.persistentVolumeClaims, selector);
  const secrets = manager.cache.informer(builtin.secrets, selector);
  const ofCluster = <T extends KubeObject>(objects: readonly T[], cluster: string) =>
    objects.filter((o) => o.metadata?.labels?.[clusterLabel] === cluster);
  // The primary's last WAL position, per cluster: it moves with every write, so it stays here
  // and reaches the status only when a failover starts (operation.referenceLsn).
  const lastPrimaryLsn = new Map<string, Lsn>();
  // A cluster made again on retained claims: the standbys' positions its last adoption turn saw.
  const retainedSeen = new Map<string, SeenPositions>();
  // The last reconcile's 'still-read-only' message, per cluster: its Event is recorded once while it lasts.
  const lastReadOnlyNotice = new Map<string, string>();
  const probeIntervalMs = options.probeIntervalMs ?? 500;
  const metrics = new ClusterMetrics(manager.metrics.registry);

  return manager.controller({
    name: 'postgresqlcluster',
    for: postgresClusters,
    owns: [builtin.services, builtin.podDisruptionBudgets],
    watches: [
      watch({ type: builtin.pods, labelSelector: managedSelector, map: clusterOf }),
      watch({ type: builtin.persistentVolumeClaims, labelSelector: managedSelector, map: clusterOf }),
      watch({ type: builtin.secrets, labelSelector: managedSelector, map: clusterOf }),
    ],
    // The operator's own status writes must not wake it; it probes on a timer instead.
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ namespace = 'default', name, object }, ctx) {
      const key = `${namespace}/${name}`;
      if (!object || isBeingDeleted(object)) {
        // Deleted: garbage collection removes what it owns (ownerReferences).
        lastPrimaryLsn.delete(key);
        retainedSeen.delete(key);
        metrics.forget(namespace, name);
        return;
      }
      // The failover state must be the API server's, never a cache that has not seen the last save.
      const cluster = await ctx.client.get(postgresClusters, name, namespace);
      const state = stateFromStatus(cluster);
      const instancesOf = <T extends KubeObject>(objects: readonly T[]) =>
        byName(ofCluster(objects, name).filter((o) => ordinalOf(name, o.metadata?.name ?? '') !== undefined));
      const podMap = instancesOf(pods.store.byIndex('namespace', namespace));
      const claimMap = instancesOf(claims.store.byIndex('namespace', namespace));
      const secretMap = byName(ofCluster(secrets.store.byIndex('namespace', namespace), name));
      const routingClient = new KubeClient(ctx.client.transport, {
        fieldManager: routingFieldManager,
      }).withSignal(ctx.signal);
      const image = cluster.spec.image ?? options.imageFor(cluster.spec.postgresVersion);
      // Only those the cluster's spec keeps: a surplus one is never started to be chosen.
      const retained = retainedInstances(cluster, claimMap).filter(
        (instance) => (ordinalOf(name, instance) ?? Infinity) < cluster.spec.instances,
      );

      let owned: WriteFailure | undefined;
      let converged: Awaited<ReturnType<typeof convergeObjects>> | undefined;
      try {
        converged = await convergeObjects(
          {
            cluster,
            state,
            pods: podMap,
            claims: claimMap,
            secrets: secretMap,
            retained,
            image,
            routingClient,
          },
          ctx,
        );
      } catch (error) {
        // Only a name someone else holds stops the converging (assertOwnedOrAbsent).
        if (!(error instanceof WriteFailure)) throw error;
        owned = error;
      }

      const failures = instanceFailures(podMap);
      const rollout = nextRolloutStep({
        cluster: name,
        primary: primaryOf(cluster.metadata?.name ?? '', state),
        pods: podMap,
        restartPending: converged?.restartPending ?? [],
        readyInstances: new Set(cluster.status?.instanceStatuses?.filter((i) => i.ready).map((i) => i.name)),
        instances: cluster.spec.instances,
        busy: !state || state.operation !== undefined,
        operation: state?.operation !== undefined,
        failing: new Set(failures.map((f) => f.instance)),
      });
      await restartForRollout(rollout, cluster, podMap, ctx);
      const refusals = [...(owned ? [owned] : []), ...ctx.writes.failures];
      const reported = cluster.status?.conditions?.find((c) => c.type === 'Degraded')?.message ?? '';
      await warnRefusedWrites(ctx.events, cluster, refusals, reported);
      const rolloutPrimary = rollout.type === 'switchover' ? rollout.to : undefined;
      const run = await turnEngine(cluster, state, podMap, secretMap, retained, key, ctx, rolloutPrimary);
      // Archiving is read from a settled primary only: during an operation the old one may be fenced.
      const archiving = archivingReport(
        cluster,
        run.state?.operation ? undefined : primaryArchiving(run.state?.currentPrimary, run.view?.instances),
      );
      if (archiving.event) {
        const { type, reason, message } = archiving.event;
        if (type === 'Warning') await ctx.events.warning(cluster, reason, 'Archive', message);
        else await ctx.events.normal(cluster, reason, 'Archive', message);
      }
      const writeError = refusedWritesProblem(refusals);
      const observation: ClusterObservation = {
        state: run.state,
        pods: podMap,
        view: run.view,
        restartPending: converged?.restartPending ?? [],
        ...(writeError ? { writeError } : {}),
        ...(run.outcome?.outcome === 'refused'
          ? { refusal: { kind: run.outcome.kind, reason: run.outcome.reason } }
          : {}),
        failures,
        ...(run.bootstrapWaiting === undefined ? {} : { bootstrapWaiting: run.bootstrapWaiting }),
        archiving,
      };
      const status = clusterStatus(cluster, observation);
      await reportFailures(cluster, status, ctx);
      // Once per set-aside copy: the status field carries it while it lasts.
      for (const instance of newlyKeptAside(
        cluster.status?.instanceStatuses,
        status.instanceStatuses ?? [],
      )) {
        await ctx.events.warning(
          cluster,
          'FormerPrimaryDataKept',
          'Rejoin',
          `${instance} was re-cloned because pg_rewind could not bring back its data as a former primary; that data is kept on its volume (pgdata.before-clone) and may hold commits the primary lacks: recover them from it, then delete it to free the space`,
        );
      }
      // The counts are the failover field manager's (read at the start of this reconcile; one that
      // completed in it shows on the next, half a second later).
      metrics.record(namespace, name, { ...countsFromStatus(cluster), ...status }, run.state?.failingSince);
      metrics.recordArchiving(
        namespace,
        name,
        primaryArchiving(run.state?.currentPrimary, run.view?.instances),
      );
      await ctx.client.applyStatusIfChanged(
        postgresClusters,
        { metadata: { name, namespace }, status },
        cluster,
      );
      // Probing goes on at its interval whatever was refused; refused writes come back on their
      // own backoff (the controller requeues sooner when one is due).
      return { requeueAfterMs: Math.min(run.retryAfterMs ?? probeIntervalMs, probeIntervalMs) };
    },
  });

  async function turnEngine(
    cluster: PostgresCluster,
    state: ReturnType<typeof stateFromStatus>,
    podMap: ReadonlyMap<string, V1Pod>,
    secretMap: ReadonlyMap<string, V1Secret>,
    retained: readonly string[],
    key: string,
    ctx: ReconcileContext,
    rolloutPrimary: string | undefined,
  ): Promise<EngineTurn> {
    const name = cluster.metadata?.name ?? '';
    const namespace = cluster.metadata?.namespace ?? 'default';
    const operatorSecret = secretMap.get(secretNames(name).operator);
    const user = decoded(operatorSecret, 'username');
    const password = decoded(operatorSecret, 'password');
    if (!user || !password) return { state, view: undefined };

    const instances = [...new Set([...instanceNames(name, cluster.spec.instances), ...podMap.keys()])].sort(
      (a, b) => (ordinalOf(name, a) ?? 0) - (ordinalOf(name, b) ?? 0),
    );
    // TLS, verified against the cluster's CA (verify-full), to every instance whose pod mounts the
    // server certificate; a pod made before the operator issued one still speaks plaintext, and
    // demanding TLS of it would count a healthy instance as unreachable (ADR 0214).
    const ca = decoded(secretMap.get(tlsSecretNames(name).ca), 'ca.crt');
    const servesTls = (instance: string) =>
      podMap.get(instance)?.spec?.volumes?.some((v) => v.name === tlsVolume) ?? false;
    const endpointOf = (instance: string): InstanceEndpoint => {
      const endpoint = options.instanceEndpoint?.(cluster, instance) ?? {
        name: instance,
        host: instanceHost(name, namespace, instance),
        port: postgresPort,
      };
      return ca && servesTls(instance) ? { ...endpoint, ca } : endpoint;
    };
    // Scaling down past the primary: it moves to the first instance, by a switchover.
    const primary = primaryOf(cluster.metadata?.name ?? '', state);
    const surplusPrimary = (ordinalOf(name, primary) ?? 0) >= cluster.spec.instances;
    // A rolling restart's switchover comes first: the primary it moves away from comes back
    // restarted, and spec.primary, if it names that one, then switches back to it.
    const desiredPrimary =
      rolloutPrimary ?? cluster.spec.primary ?? (surplusPrimary ? instanceName(name, 0) : undefined);
    const failoverClient = new KubeClient(ctx.client.transport, {
      fieldManager: failoverFieldManager,
    }).withSignal(ctx.signal);
    const routingClient = new KubeClient(ctx.client.transport, {
      fieldManager: routingFieldManager,
    }).withSignal(ctx.signal);
    const events: EngineEvent[] = [];
    const last = lastPrimaryLsn.get(key);
    const seen = retainedSeen.get(key);
    const connect = options.connect ?? operatorConnectOptions;
    let result: FailoverRunResult;
    try {
      result = await runFailover({
        cluster,
        state,
        instances,
        retained,
        endpointOf,
        credentials: { user, password },
        connect,
        failoverClient,
        world: podWorld({
          client: ctx.client,
          routingClient,
          namespace,
          answers: (instance) => stillAnswers(instance, { user, password }, connect),
        }),
        ...(desiredPrimary === undefined ? {} : { desiredPrimary }),
        ...(last === undefined ? {} : { lastPrimaryLsn: last }),
        ...(seen === undefined ? {} : { retainedSeen: seen }),
        ...(options.maxLagBytes === undefined ? {} : { maxLagBytes: options.maxLagBytes }),
        ...(options.electionTimeoutMs === undefined ? {} : { electionTimeoutMs: options.electionTimeoutMs }),
        emit: (event) => {
          events.push(event);
          ctx.log.info({ engineEvent: event.type, instance: event.instance }, event.message);
        },
      });
    } finally {
      const notice = events.find((e) => e.type === 'still-read-only')?.message;
      const previous = lastReadOnlyNotice.get(key);
      if (notice === undefined) lastReadOnlyNotice.delete(key);
      else lastReadOnlyNotice.set(key, notice);
      await recordEvents(
        cluster,
        events.filter((e) => e.type !== 'still-read-only' || e.message !== previous),
        ctx,
      );
    }
    await keepSuperuserAccess(cluster, result, secretMap, endpointOf, { user, password }, connect, ctx);
    if (result.lastPrimaryLsn === undefined) lastPrimaryLsn.delete(key);
    else lastPrimaryLsn.set(key, result.lastPrimaryLsn);
    if (result.retainedSeen === undefined) retainedSeen.delete(key);
    else retainedSeen.set(key, result.retainedSeen);
    const outcome = result.outcome;
    if (outcome?.outcome === 'promoted') {
      await ctx.events.normal(
        cluster,
        outcome.kind === 'failover' ? 'FailoverCompleted' : 'SwitchoverCompleted',
        outcome.kind === 'failover' ? 'Failover' : 'Switchover',
        `${outcome.newPrimary} is primary (timeline ${outcome.timeline ?? '?'}), replacing ${outcome.oldPrimary}, in ${outcome.durationMs} ms`,
      );
    } else if (outcome?.outcome === 'reinstated') {
      await ctx.events.normal(
        cluster,
        'PrimaryReinstated',
        'Failover',
        `${outcome.primary} is primary again (timeline ${outcome.timeline ?? '?'}) after ${outcome.durationMs} ms: no replica could replace it`,
      );
    } else if (outcome?.outcome === 'refused') {
      // Once per distinct refusal: the condition carries it while it lasts.
      const degraded = cluster.status?.conditions?.find((c) => c.type === 'Degraded');
      if (degraded?.message !== outcome.reason) {
        await ctx.events.warning(
          cluster,
          outcome.kind === 'failover' ? 'FailoverRefused' : 'SwitchoverRefused',
          outcome.kind === 'failover' ? 'Failover' : 'Switchover',
          outcome.reason,
        );
      }
    }
    return result;
  }
}

/**
 * `superuserAccess`: the `postgres` role logs in with the published Secret's password while it is
 * on, and cannot log in while it is off; done on a settled, writable primary only.
 */
async function keepSuperuserAccess(
  cluster: PostgresCluster,
  run: FailoverRunResult,
  secretMap: ReadonlyMap<string, V1Secret>,
  endpointOf: (instance: string) => InstanceEndpoint,
  credentials: { user: string; password: string },
  connect: ConnectOptions,
  ctx: ReconcileContext,
): Promise<void> {
  const primary = run.state?.currentPrimary;
  if (!primary || run.state?.operation) return;
  const observed = run.view.instances.find((i) => i.status.name === primary)?.status;
  if (!observed?.reachable || observed.role !== 'primary') return;
  let password: string | undefined;
  if (cluster.spec.superuserAccess) {
    password = decoded(secretMap.get(secretNames(cluster.metadata?.name ?? '').superuser), 'password');
    if (password === undefined) return; // the Secret is not in the cache yet
  }
  try {
    const changed = await setSuperuserAccess(
      { endpoint: endpointOf(primary), credentials, options: connect },
      superuserName,
      password,
    );
    if (changed) {
      await ctx.events.normal(
        cluster,
        password === undefined ? 'SuperuserAccessRevoked' : 'SuperuserAccessGranted',
        'SuperuserAccess',
        password === undefined
          ? `${superuserName} can no longer log in`
          : `${superuserName} logs in with the password in Secret ${secretNames(cluster.metadata?.name ?? '').superuser}`,
      );
    }
  } catch (error) {
    // The next reconcile tries again; the message names the instance and the step, never the password.
    ctx.log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'superuser access not applied yet',
    );
  }
}

/** A Warning Event when the Degraded condition names a failing instance it did not name before. */
async function reportFailures(
  cluster: PostgresCluster,
  status: PostgresClusterStatusFields,
  ctx: ReconcileContext,
): Promise<void> {
  const now = findCondition(status.conditions, conditionTypes.degraded);
  if (now?.reason !== 'InstanceFailing') return;
  const before = findCondition(cluster.status?.conditions, conditionTypes.degraded);
  if (before?.reason === now.reason && before.message === now.message) return;
  await ctx.events.warning(cluster, 'InstanceFailing', 'Observe', now.message);
}

async function recordEvents(cluster: PostgresCluster, events: readonly EngineEvent[], ctx: ReconcileContext) {
  for (const event of events) {
    const reason = eventReasons[event.type];
    if (!reason) continue;
    const [why, type] = reason;
    const action = why.replace(/Started$|Completed$/, '');
    if (type === 'Warning') await ctx.events.warning(cluster, why, action, event.message);
    else await ctx.events.normal(cluster, why, action, event.message);
  }
}

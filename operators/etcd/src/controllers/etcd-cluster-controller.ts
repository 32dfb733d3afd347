// The EtcdCluster reconciler: Services and PodDisruptionBudget by server-side apply; members as
// pods and claims driven one step at a time by the engine (ADR 0301); status from etcd's own view.
// Every line is safe to repeat: what exists is read from the caches and etcd, never remembered.
// A write the API server refuses backs off on its own (ctx.writes) and is reported in status;
// observation, membership and recovery supervision run regardless (ADR 0603).
import type { V1Pod } from '@kubernetes/client-node';
import {
  PermanentError,
  WriteFailure,
  assertOwnedOrAbsent,
  builtin,
  generationChanged,
  isBeingDeleted,
  mapToLabelledOwner,
  refusedWritesProblem,
  warnRefusedWrites,
  isControlledBy,
  watch,
  type Controller,
  type KubeObject,
  type Manager,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { imageOf, minorOf } from '../api/etcd-versions.ts';
import type { EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import { memberIdHex } from '../member-id.ts';
import { normalizeUrl } from '../membership/members.ts';
import {
  reconcileMembershipStep,
  replaceMember,
  type DesiredMember,
  type StepOutcome,
} from '../membership/membership-reconciler.ts';
import {
  claimName,
  defaultOperatorImage,
  desiredMemberNames,
  managedSelector,
  nameOf,
  namespaceOf,
  ordinalOf,
  seedMemberId,
  tlsSecretNames,
} from './cluster-names.ts';
import { clusterStatus, type Problem } from './cluster-status.ts';
import { clientCredentials, ensureGeneratedTls } from './cluster-tls.ts';
import { claimMemberId } from './desired-member-claim.ts';
import { claimOwnersToWrite, heldByAnother, memberOfClaim, retainedClaimNames } from './claim-retention.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredClientService, desiredPeerService } from './desired-services.ts';
import {
  deleteMemberObjects,
  ensureMemberObjects,
  kubeMemberRuntime,
  type KubeMemberRuntimeDeps,
} from './kube-member-runtime.ts';
import { prepareRestore } from './backup/prepare-restore.ts';
import { RestoreRefusal, restoreSourceOfBackup } from './backup/restore-source.ts';
import type { MemberAddressing } from './member-addressing.ts';
import type { ClusterGauges } from '../metrics/cluster-gauges.ts';
import { OwnedObjects, ownedKinds } from './owned-objects.ts';
import { rollUpgradeStep, versionOfImage, type UpgradeOutcome } from './rolling-upgrade.ts';
import { judgeVersionChange, type VersionChange } from './version-change.ts';
import { podImage } from './desired-member-pod.ts';
import { versionRank } from './cluster-status.ts';
import { maintainCluster } from './cluster-maintenance.ts';
import { RefusedBackups, superviseQuorum, type RecoveryDecision } from './quorum-recovery.ts';

export interface EtcdClusterControllerOptions {
  /** Where members are reached and listen: DNS names in a cluster, loopback ports in tests. */
  readonly addressing: MemberAddressing;
  /** Repository of the etcd images (tags v<version>); etcd's own by default. */
  readonly imageRepository?: string;
  /** Deadline of each call to etcd, in ms (default 5000). */
  readonly etcdCallTimeoutMs?: number;
  /** How often a converged cluster's health is read again, in ms (default 30 s). */
  readonly healthIntervalMs?: number;
  /** How soon a cluster that is changing (creating, scaling) is looked at again, in ms (default 2 s). */
  readonly stepIntervalMs?: number;
  readonly maxConcurrentReconciles?: number;
  /** The operator's own image: the restore steps of a cluster made from a backup run in it. */
  readonly operatorImage?: string;
  /** The operator's per-cluster gauges, fed from each reconcile's status. */
  readonly gauges?: ClusterGauges;
}

/**
 * Something keeps the operator from carrying out the spec; becomes Degraded and a Warning Event.
 * `permanent`: only a change of the spec can help (the reconcile is not retried until one comes).
 */
class Refusal extends Error {
  override readonly name = 'Refusal';
  /** The condition reason (CamelCase). */
  readonly reason: string;
  readonly permanent: boolean;
  constructor(reason: string, message: string, options: { cause?: unknown; permanent?: boolean } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.reason = reason;
    this.permanent = options.permanent ?? false;
  }
}

/**
 * A write an engine step cannot go on without: sent through `ctx.writes` (its own backoff), a
 * refusal stops the step as an ApplyFailed Refusal.
 */
async function write<T>(ctx: ReconcileContext, what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await ctx.writes.step(what, action);
  } catch (error) {
    if (!(error instanceof WriteFailure)) throw error;
    throw new Refusal('ApplyFailed', error.message, { cause: error });
  }
}

/**
 * A Service of this name someone else holds stops everything (NameTaken): clients would reach it.
 * Whose the object is and what to say is the library's (assertOwnedOrAbsent).
 */
function assertServiceOurs(current: KubeObject | undefined, cluster: EtcdCluster): void {
  try {
    assertOwnedOrAbsent(current, cluster, 'Service');
  } catch (error) {
    if (!(error instanceof WriteFailure)) throw error;
    throw new Refusal(error.reason, error.message);
  }
}

/** What one reconcile of one cluster works with. */
interface Round {
  readonly cluster: EtcdCluster;
  readonly ctx: ReconcileContext;
  readonly deps: KubeMemberRuntimeDeps;
  readonly desired: readonly DesiredMember[];
  readonly connection: EtcdConnection;
}

/**
 * Services and the PodDisruptionBudget. Nothing after them waits on a refused write (it is only
 * recorded in `ctx.writes`); a Service name someone else holds stops everything (NameTaken), as
 * clients would reach their Service.
 */
async function applyClusterObjects(round: Round): Promise<void> {
  const { cluster, ctx, deps } = round;
  for (const service of [desiredPeerService(cluster), desiredClientService(cluster)]) {
    const name = service.metadata?.name ?? '';
    // Only labelled Services are cached; one of this name without the label is someone else's.
    const current =
      deps.owned.service(cluster, name) ??
      (await ctx.client.find(builtin.services, name, namespaceOf(cluster)));
    assertServiceOurs(current, cluster);
    await ctx.writes.attempt(`applying Service ${name}`, () =>
      ctx.client.applyIfChanged(builtin.services, service, current),
    );
  }
  const pdb = desiredPodDisruptionBudget(cluster);
  const current = deps.owned.podDisruptionBudget(cluster, nameOf(cluster));
  if (pdb) {
    await ctx.writes.attempt(`applying PodDisruptionBudget ${nameOf(cluster)}`, () =>
      ctx.client.applyIfChanged(builtin.podDisruptionBudgets, pdb, current),
    );
  } else if (current && isControlledBy(current, cluster)) {
    await ctx.writes.attempt(`deleting PodDisruptionBudget ${nameOf(cluster)}`, () =>
      ctx.client.delete(builtin.podDisruptionBudgets, nameOf(cluster), namespaceOf(cluster), {
        uid: current.metadata?.uid ?? '',
      }),
    );
  }
}

/**
 * Each member claim's owner reference as `storage.retention` asks (claim-retention.ts): set under
 * Delete, removed under Retain. A refused write is recorded, never waited on.
 */
async function applyClaimRetention(round: Round): Promise<void> {
  const { cluster, ctx, deps } = round;
  for (const claim of deps.owned.claimsOf(cluster)) {
    const name = claim.metadata?.name ?? '';
    if (!memberOfClaim(cluster, claim) || claim.metadata?.deletionTimestamp) continue;
    if (heldByAnother(cluster, claim)) continue;
    const ownerReferences = claimOwnersToWrite(cluster, claim);
    if (!ownerReferences) continue;
    await ctx.writes.attempt(`setting the owner of PersistentVolumeClaim ${name}`, () =>
      ctx.client.patch(builtin.persistentVolumeClaims, name, namespaceOf(cluster), {
        // The resourceVersion makes it a compare-and-swap: a claim changed since it was read is not
        // given an owner list computed from its old one.
        metadata: { ownerReferences, resourceVersion: claim.metadata?.resourceVersion },
      }),
    );
  }
}

/**
 * Pods, claims or Secrets labelled for this cluster's name but controlled by another object: those
 * of an EtcdCluster of the same name deleted a moment ago, which the garbage collector has not
 * removed yet. Nothing starts on them (their data is on its way out) and nothing is made beside
 * them; the cluster waits, saying why.
 */
function assertNoPreviousObjects(cluster: EtcdCluster, owned: OwnedObjects): void {
  const held = [...owned.podsOf(cluster), ...owned.claimsOf(cluster), ...owned.secretsOf(cluster)]
    .filter((o) => heldByAnother(cluster, o))
    .map((o) => o.metadata?.name ?? '')
    .sort();
  if (held.length === 0) return;
  throw new Refusal(
    'PreviousClusterObjects',
    `${held.join(', ')} belong to an earlier EtcdCluster named ${nameOf(cluster)} and are being garbage-collected; members start once they are gone`,
  );
}

/**
 * Claims of members other than the first, before this cluster has an etcd cluster ID: a new
 * cluster has none (the first member alone answers before any other is added, ADR 0301), so these
 * were kept by `storage.retention: Retain` for an EtcdCluster of this name deleted earlier.
 */
function hasRetainedMembers(cluster: EtcdCluster, owned: OwnedObjects): boolean {
  return owned
    .claimsOf(cluster)
    .some((c) => (ordinalOf(nameOf(cluster), memberOfClaim(cluster, c) ?? '') ?? 0) > 0);
}

/**
 * A cluster to be restored from bootstrap.fromBackup over claims an earlier EtcdCluster of its name
 * retained: its members would restart on that cluster's data (the backup never read), or the first
 * member's restore would find its data and no snapshot. Neither is what was asked: nothing is made
 * until the claims are deleted (the claims are watched: the backup is then restored), or the
 * EtcdCluster is created again without fromBackup, which is fixed at creation (the members then
 * resume on their data, ADR 0306).
 */
function assertNoRetainedClaims(cluster: EtcdCluster, owned: OwnedObjects): void {
  const retained = retainedClaimNames(cluster, owned.claimsOf(cluster));
  if (retained.length === 0) return;
  throw new Refusal(
    'RetainedClaimsConflict',
    `retained member claims ${retained.join(', ')} hold a previous cluster's data; bootstrap.fromBackup would be ignored: delete the claims to restore the backup, or create the EtcdCluster again without bootstrap.fromBackup (fixed at creation) to resume on the retained data`,
    { permanent: true },
  );
}

/** Reads etcd through every member that has a pod; undefined (with why) when none answers. */
async function observe(round: Round): Promise<{ health?: ClusterHealth; unreachable?: string }> {
  if (round.connection.endpoints.length === 0) return { unreachable: 'no member pod exists' };
  try {
    return { health: await readClusterHealth(round.connection) };
  } catch (error) {
    return { unreachable: messageOf(error) };
  }
}

/**
 * A new cluster: member 0 alone, as a new etcd cluster (ADR 0301: seed, then grow); from a verified
 * backup when the spec says bootstrap.fromBackup (ADR 0302), checked once, before its pod exists.
 */
async function seed(round: Round, operatorImage: string, fromBackup?: EtcdBackup): Promise<void> {
  const [first] = round.desired;
  if (!first) return;
  let restore: ((pod: V1Pod) => V1Pod) | undefined;
  try {
    if (!round.deps.owned.pod(round.cluster, first.name)) {
      // The cache may not show yet a pod made a moment ago: ask the API server before a restore is
      // prepared again (for a backup in a claim, that would start a second check pod).
      if (await round.deps.client.find(builtin.pods, first.name, namespaceOf(round.cluster))) return;
      const prepared = await prepareRestore(
        { ...round.deps, images: { operator: operatorImage, etcd: round.deps.image } },
        first,
        fromBackup ? await restoreSourceOfBackup(fromBackup, round.deps.client) : undefined,
      );
      // A backup in a claim is being checked by its pod: nothing is made before it answers.
      if (prepared?.kind === 'verifying') return;
      restore = prepared?.decorate;
    }
  } catch (error) {
    if (error instanceof RestoreRefusal) {
      throw new Refusal(error.reason, `${error.message}; nothing was created`, {
        permanent: error.permanent,
      });
    }
    throw error;
  }
  await write(round.ctx, `creating member ${first.name}`, () =>
    ensureMemberObjects(
      round.deps,
      first.name,
      { initialCluster: `${first.name}=${first.peerUrl}`, state: 'new' },
      seedMemberId,
      restore,
    ),
  );
}

/**
 * No member answers, but the cluster exists: bring back every member whose claim still holds its
 * data (after all pods were deleted, say, or in an EtcdCluster created again over the claims a
 * deleted one of the same name retained). Their data directories decide who they are; the
 * initial-cluster flags are ignored by a member that has data. Members beyond `spec.size` with a
 * claim come back too: they may be needed for quorum, and scaling removes them once it answers.
 */
async function restartMembers(round: Round): Promise<void> {
  const { cluster, deps } = round;
  const withClaims = new Set(deps.owned.claimsOf(cluster).flatMap((c) => memberOfClaim(cluster, c) ?? []));
  const extra = [...withClaims].filter((name) => !round.desired.some((d) => d.name === name));
  const withData = [
    ...round.desired.filter((d) => withClaims.has(d.name)),
    ...(await Promise.all(
      extra.map(async (name) => ({ name, ...(await deps.addressing.urls(cluster, name)) })),
    )),
  ];
  const initialCluster = withData.map((d) => `${d.name}=${d.peerUrl}`).join(',');
  const started: string[] = [];
  for (const member of withData) {
    if (deps.owned.pod(cluster, member.name)) continue;
    const claim = deps.owned.claim(cluster, claimName(member.name));
    const made = await write(round.ctx, `recreating pod ${member.name}`, () =>
      ensureMemberObjects(
        deps,
        member.name,
        { initialCluster, state: 'existing' },
        claimMemberId(claim) ?? '',
      ),
    );
    if (made === 'created') started.push(member.name);
  }
  if (started.length && !cluster.status?.clusterId) {
    await round.ctx.events.normal(
      cluster,
      'RetainedClaimsAdopted',
      'Create',
      `restarting ${started.join(', ')} on the claims an earlier EtcdCluster named ${nameOf(cluster)} retained: the members resume with their data`,
    );
  }
}

/**
 * Members etcd lists as started whose pods or claims are gone: a missing pod is made again (its
 * claim still holds the data); a claim deleted or being deleted means the data is lost, so the
 * member is replaced once removing it is safe (then its pod goes first, which lets a claim in use
 * finish deleting); until then it serves on and the status says why it waits.
 */
async function healMembers(round: Round, health: ClusterHealth): Promise<StepOutcome | undefined> {
  const { cluster, deps, ctx } = round;
  const started = health.members.filter((m) => m.member.started);
  const initialCluster = health.members
    .map((m) => {
      const desired = round.desired.find((d) =>
        m.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(d.peerUrl)),
      );
      return desired ? `${desired.name}=${desired.peerUrl}` : undefined;
    })
    .filter(Boolean)
    .join(',');
  let waiting: Refusal | undefined;
  for (const listed of started) {
    const desired = round.desired.find((d) =>
      listed.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(d.peerUrl)),
    );
    if (!desired) continue;
    const claim = deps.owned.claim(cluster, claimName(desired.name));
    // A claim being deleted is data about to go (it waits only for the pod to let go of it).
    if (!claim || claim.metadata?.deletionTimestamp) {
      // Replacing needs a membership change, which needs quorum: without it the member waits (a
      // lost majority is the recovery's, quorum-recovery.ts), and the status still gets written.
      if (!health.hasQuorum) continue;
      try {
        await replaceMember(round.connection, desired, {
          runtime: kubeMemberRuntime(deps),
          allowTwoMemberRemoval: false,
        });
      } catch (error) {
        if (!(error instanceof EtcdEngineError)) throw error;
        // Refused before anything was stopped: the member serves on while its claim waits, and the
        // other members are still looked after; the status and an Event say why.
        waiting ??= new Refusal(
          error.reason,
          `${desired.name} lost its data (its claim is deleted) but is not replaced yet: ${error.message}`,
          { cause: error },
        );
        continue;
      }
      await ctx.events.warning(
        cluster,
        'MemberReplaced',
        'Replace',
        `the claim of ${desired.name} is deleted, so its data is lost: removed it from etcd; it joins again empty as a learner`,
      );
      return { kind: 'changed', action: 'remove', member: desired.name };
    }
    if (!deps.owned.pod(cluster, desired.name)) {
      // Each member's pod on its own: one refused does not keep the others from coming back.
      await ctx.writes.attempt(`recreating pod ${desired.name}`, () =>
        ensureMemberObjects(
          deps,
          desired.name,
          { initialCluster, state: 'existing' },
          memberIdHex(listed.member.id),
        ),
      );
    }
  }
  if (waiting) throw waiting;
  return undefined;
}

/** Pods and claims of members that are neither wanted nor listed by etcd (left over by a removal). */
async function collectLeftovers(round: Round, health: ClusterHealth): Promise<void> {
  const { cluster, deps } = round;
  const wanted = new Set(round.desired.map((d) => d.name));
  const names = new Set(
    [...deps.owned.podsOf(cluster), ...deps.owned.claimsOf(cluster)].map(
      (o) => o.metadata?.labels?.['etcd.homeostat.dev/member'] ?? '',
    ),
  );
  for (const name of names) {
    if (!name || wanted.has(name) || ordinalOf(nameOf(cluster), name) === undefined) continue;
    const urls = await deps.addressing.urls(cluster, name);
    const listed = health.members.some((m) =>
      m.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(urls.peerUrl)),
    );
    if (!listed) {
      await write(round.ctx, `deleting the pod and claim of ${name}`, () => deleteMemberObjects(deps, name));
    }
  }
}

const stepEvents: Record<string, { reason: string; note: (m: string) => string }> = {
  'add-learner': { reason: 'MemberAdded', note: (m) => `added ${m} to etcd as a learner` },
  promote: { reason: 'MemberPromoted', note: (m) => `promoted ${m} to a voting member` },
  remove: { reason: 'MemberRemoved', note: (m) => `removed ${m} from etcd` },
};

async function convergeMembers(round: Round, health: ClusterHealth): Promise<StepOutcome> {
  const healed = await healMembers(round, health);
  if (healed) return healed;
  let step: StepOutcome;
  try {
    step = await reconcileMembershipStep(round.connection, round.desired, {
      runtime: kubeMemberRuntime(round.deps),
      // Going to one member is what the spec asks for; the engine still refuses unless both are healthy.
      allowTwoMemberRemoval: round.cluster.spec.size === 1,
    });
  } catch (error) {
    if (error instanceof EtcdEngineError) throw new Refusal(error.reason, error.message, { cause: error });
    throw error;
  }
  if (step.kind === 'changed') {
    const event = stepEvents[step.action];
    if (event) await round.ctx.events.normal(round.cluster, event.reason, 'Scale', event.note(step.member));
  }
  if (step.kind === 'converged') await collectLeftovers(round, health);
  return step;
}

/** One member moved to spec.version once membership has settled (rolling-upgrade.ts). */
async function upgradeMembers(round: Round, health: ClusterHealth): Promise<UpgradeOutcome> {
  const outcome = await write(round.ctx, 'upgrading a member', () =>
    rollUpgradeStep(round.deps, round.desired, health, round.connection),
  );
  if (outcome.kind === 'leader-moved') {
    await round.ctx.events.normal(
      round.cluster,
      'LeadershipMoved',
      'Upgrade',
      `moved leadership from ${outcome.member} to ${outcome.to} before restarting ${outcome.member} on etcd ${round.cluster.spec.version}, so no election runs with a member down`,
    );
  }
  if (outcome.kind === 'recreated') {
    await round.ctx.events.normal(
      round.cluster,
      'MemberRecreated',
      'Upgrade',
      `recreating the pod of ${outcome.member} with its claim: ${outcome.why}; the next member waits until it is healthy`,
    );
  }
  if (outcome.kind === 'rolled') {
    const back = versionRank(outcome.to) < versionRank(outcome.from);
    await round.ctx.events.normal(
      round.cluster,
      back ? 'MemberRollingBack' : 'MemberUpgrading',
      'Upgrade',
      `restarting ${outcome.member} on etcd ${outcome.to} (was ${outcome.from}); the next member waits until it is healthy`,
    );
  }
  return outcome;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** NOSPACE recovery or one member's defragmentation, on a settled cluster (cluster-maintenance.ts). */
async function maintain(round: Round, health: ClusterHealth): Promise<void> {
  let outcome;
  try {
    outcome = await maintainCluster(round.cluster, round.connection, health);
  } catch (error) {
    if (error instanceof EtcdEngineError) throw new Refusal(error.reason, error.message, { cause: error });
    throw error;
  }
  const { cluster, ctx } = round;
  if (outcome.kind === 'nospace-recovered' && outcome.recovery.recovered) {
    await ctx.events.warning(
      cluster,
      'NoSpaceRecovered',
      'Maintain',
      `etcd had raised NOSPACE (its database reached the quota): compacted at revision ${outcome.recovery.compactedAtRevision ?? '?'}, defragmented ${outcome.recovery.defragmented.length} members, disarmed the alarm; writes work again. Raise the quota or write less if it comes back`,
    );
  }
  if (outcome.kind === 'defragmented') {
    const { result, fragmentation } = outcome;
    await ctx.events.normal(
      cluster,
      'MemberDefragmented',
      'Maintain',
      `defragmented ${result.member} (${Math.round(fragmentation * 100)}% of its database file was free): ${mib(result.dbSizeBefore)} → ${mib(result.dbSizeAfter)}`,
    );
  }
}

async function desiredMembers(cluster: EtcdCluster, addressing: MemberAddressing): Promise<DesiredMember[]> {
  return Promise.all(
    desiredMemberNames(cluster).map(async (name) => ({ name, ...(await addressing.urls(cluster, name)) })),
  );
}

/** The versions the member pods' images name (what their containers run or are restarting into). */
function podVersions(cluster: EtcdCluster, owned: OwnedObjects): string[] {
  return owned
    .podsOf(cluster)
    .filter((p) => ordinalOf(nameOf(cluster), p.metadata?.name ?? '') !== undefined)
    .flatMap((p) => versionOfImage(podImage(p)) ?? []);
}

/** Client URLs of every member that has a pod: the engine asks each in turn. */
async function endpointsOf(
  cluster: EtcdCluster,
  owned: OwnedObjects,
  addressing: MemberAddressing,
): Promise<string[]> {
  const names = owned
    .podsOf(cluster)
    .map((p) => p.metadata?.name ?? '')
    .filter((n) => ordinalOf(nameOf(cluster), n) !== undefined)
    .sort((a, b) => (ordinalOf(nameOf(cluster), a) ?? 0) - (ordinalOf(nameOf(cluster), b) ?? 0));
  return Promise.all(names.map(async (n) => (await addressing.urls(cluster, n)).clientUrl));
}

/** The operator's client certificate for this cluster; a Secret it cannot use is a Refusal. */
async function credentialsOf(
  cluster: EtcdCluster,
  ctx: ReconcileContext,
  owned: OwnedObjects,
): Promise<EtcdConnection['credentials']> {
  try {
    return await clientCredentials(cluster, ctx.client, owned);
  } catch (error) {
    throw new Refusal('ClientCertificateUnusable', messageOf(error), { cause: error });
  }
}

/** Adds the EtcdCluster controller to `manager`. */
export function addEtcdClusterController(
  manager: Manager,
  options: EtcdClusterControllerOptions,
): Controller<EtcdCluster> {
  const owned = new OwnedObjects(manager);
  // The backup-age gauge and disaster recovery (the newest good backup) read the EtcdBackups.
  const backupStore = manager.cache.informer(etcdBackups).store;
  // Backups a disaster recovery found it cannot restore: each is checked and reported once.
  const refusedBackups = new RefusedBackups();
  const healthIntervalMs = options.healthIntervalMs ?? 30_000;
  const stepIntervalMs = options.stepIntervalMs ?? 2000;

  return manager.controller({
    name: 'etcdcluster',
    for: etcdClusters,
    // Everything the operator makes carries its label; a change to any of it wakes the cluster.
    watches: ownedKinds.map((type) =>
      watch({ type, labelSelector: managedSelector, map: mapToLabelledOwner('app.kubernetes.io/instance') }),
    ),
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ namespace, name, object: cluster }, ctx): Promise<ReconcileResult> {
      // Deleted or being deleted: garbage collection removes what it owns (ownerReferences).
      if (!cluster || isBeingDeleted(cluster)) {
        options.gauges?.forget({ namespace: namespace ?? '', name });
        return {};
      }

      const image = imageOf(cluster.spec.version, options.imageRepository) ?? '';
      const deps: KubeMemberRuntimeDeps = {
        cluster,
        client: ctx.client,
        events: ctx.events,
        owned,
        addressing: options.addressing,
        image,
      };
      const desired = await desiredMembers(cluster, options.addressing);

      let problem: Problem | undefined;
      let tlsProblem: Problem | undefined;
      let refusal: Refusal | undefined;
      let step: StepOutcome | undefined;
      let upgrade: UpgradeOutcome | undefined;
      let recovery: RecoveryDecision | undefined;
      let observed: { health?: ClusterHealth; unreachable?: string } = {};
      let versionChange: VersionChange | undefined;
      try {
        if (!image) {
          throw new Refusal('UnknownVersion', `no image for etcd ${cluster.spec.version}`, {
            permanent: true,
          });
        }
        if (!cluster.spec.paused) {
          assertNoPreviousObjects(cluster, owned);
          // Certificates first: no member pod may start without the Secrets it mounts.
          const tls = await ctx.writes.attempt('making the TLS Secrets', () =>
            ensureGeneratedTls(cluster, ctx.client, owned, options.addressing),
          );
          if (tls?.made.length) {
            await ctx.events.normal(
              cluster,
              'CertificatesCreated',
              'Create',
              `created Secrets ${tls.made.join(', ')}`,
            );
          }
          if (tls?.renewed.length) {
            await ctx.events.normal(
              cluster,
              'CertificatesRenewed',
              'Renew',
              `issued the certificates in ${tls.renewed.join(', ')} again before they expire; members read them at their next handshakes`,
            );
          }
          // The members go on with the certificates they hold: observed and healed as usual.
          if (tls?.caMissing) tlsProblem = { reason: 'CertificateAuthorityMissing', message: tls.caMissing };
        }
        let round: Round = {
          cluster,
          ctx,
          deps,
          desired,
          connection: {
            endpoints: await endpointsOf(cluster, owned, options.addressing),
            callTimeoutMs: options.etcdCallTimeoutMs ?? 5000,
            credentials: await credentialsOf(cluster, ctx, owned),
          },
        };
        // Observation and healing never wait on these (ADR 0603).
        if (!cluster.spec.paused) {
          await applyClusterObjects(round);
          await applyClaimRetention(round);
        }
        observed = await observe(round);
        versionChange = judgeVersionChange(
          cluster.spec.version,
          podVersions(cluster, owned),
          observed.health?.clusterVersion,
          options.imageRepository,
        );
        // A way back etcd would refuse: nothing is rolled, and a member made again meanwhile runs
        // what the others run, not the version its data cannot go back to.
        if (versionChange.kind === 'refused')
          round = { ...round, deps: { ...round.deps, image: versionChange.keepImage } };
        if (!cluster.spec.paused) {
          recovery = await superviseQuorum({
            cluster,
            deps: round.deps,
            events: ctx.events,
            health: observed.health,
            backups: backupStore.list(),
            seedFrom: (backup) => seed(round, options.operatorImage ?? defaultOperatorImage, backup),
            operatorImage: options.operatorImage ?? defaultOperatorImage,
            refused: refusedBackups,
            now: new Date(),
          });
        }
        if (!cluster.spec.paused && !recovery?.inCharge) {
          if (observed.health) step = await convergeMembers(round, observed.health);
          else if (cluster.status?.clusterId) await restartMembers(round);
          else {
            if (cluster.spec.bootstrap?.fromBackup) assertNoRetainedClaims(cluster, owned);
            if (hasRetainedMembers(cluster, owned)) await restartMembers(round);
            else await seed(round, options.operatorImage ?? defaultOperatorImage);
          }
          if (step?.kind === 'converged' && observed.health && versionChange.kind !== 'refused')
            upgrade = await upgradeMembers(round, observed.health);
          if (upgrade?.kind === 'at-version' && observed.health) await maintain(round, observed.health);
        }
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        problem = { reason: error.reason, message: error.message };
        refusal = error;
        // A permanent refusal's Event comes with the PermanentError below; a refused write's with
        // the other refused writes, below.
        if (!error.permanent && !(error.cause instanceof WriteFailure)) {
          await ctx.events.warning(cluster, error.reason, 'Reconcile', error.message);
        }
      }

      problem ??= recovery?.problem;
      if (versionChange?.kind === 'refused' && !problem) {
        const refusedChange = { reason: versionChange.reason, message: versionChange.message };
        // One Event, when Degraded does not say it yet (every reconcile finds it while it lasts).
        if (!conditionMessage(cluster, 'Degraded').includes(refusedChange.message))
          await ctx.events.warning(cluster, refusedChange.reason, 'Upgrade', refusedChange.message);
        problem = refusedChange;
      }
      if (tlsProblem) {
        // One Event, when Degraded does not say it yet (every reconcile finds it while it lasts).
        if (!conditionMessage(cluster, 'Degraded').includes(tlsProblem.message))
          await ctx.events.warning(cluster, tlsProblem.reason, 'Reconcile', tlsProblem.message);
        // Named beside whatever else holds Degraded: a lost CA must not wait for that to clear.
        problem = problem ? { ...problem, message: `${problem.message}; ${tlsProblem.message}` } : tlsProblem;
      }
      // What slows the next look (an engine that cannot go on) is the problem above; refused writes
      // are reported, but the cluster is looked after at the usual pace.
      const engineProblem = problem;
      const refused = ctx.writes.failures;
      if (refused.length) problem ??= refusedWritesProblem(refused);
      await warnRefusedWrites(ctx.events, cluster, refused, conditionMessage(cluster, 'Degraded'));
      // While quorum is lost or a recovery runs, the status as last written (the cache may lag
      // this operator's own last write): what transitions, and their Events, are decided from.
      const latest = recovery?.seen ?? cluster;
      const status = clusterStatus(latest, {
        recovery: recovery ? recovery.status : cluster.status?.recovery,
        desired,
        health: observed.health,
        unreachable: observed.unreachable,
        operatorCutOff: recovery?.operatorCutOff,
        step,
        problem,
        clientEndpoint: options.addressing.clientEndpoint(cluster),
        clientSecret: tlsSecretNames(cluster)?.client,
      });
      options.gauges?.observe(cluster, status);
      // The newest Succeeded EtcdBackup of this cluster, from the cache (the backup controller writes it).
      const lastBackup = newestBackupFinish(backupStore.list(), cluster);
      if (lastBackup) options.gauges?.backupSucceeded(cluster, lastBackup);
      const before = latest.status;
      if (!before?.clusterId && status.clusterId) {
        await ctx.events.normal(
          cluster,
          'ClusterCreated',
          'Create',
          `etcd cluster ${status.clusterId} answers`,
        );
      }
      if (status.phase === 'QuorumLost' && before?.phase !== 'QuorumLost') {
        await ctx.events.warning(
          cluster,
          'QuorumLost',
          'Observe',
          status.conditions?.find((c) => c.type === 'QuorumLost')?.message ?? '',
        );
      }
      await ctx.client.applyStatusIfChanged(
        etcdClusters,
        { metadata: { name, namespace: namespaceOf(cluster) }, status },
        latest,
      );
      // After the status says why: a spec that cannot be carried out waits for a change of it. A
      // refused write is not thrown: it comes back on its own backoff (the controller requeues
      // sooner when it is due), and health is looked at meanwhile as always.
      if (refusal?.permanent) throw new PermanentError(refusal.reason, refusal.message);
      // Membership moves in steps: come back soon while it does, otherwise poll health.
      const busy =
        (step !== undefined && step.kind !== 'converged') ||
        (upgrade !== undefined && upgrade.kind !== 'at-version') ||
        !status.clusterId ||
        !observed.health ||
        // Every member runs a newer minor than etcd's cluster version: etcd moves it within seconds,
        // and until status says so the API server would still let a way back through.
        clusterVersionLags(status);
      const requeueAfterMs = busy && !engineProblem ? stepIntervalMs : healthIntervalMs;
      // A recovery step to follow, or the end of its wait, may come sooner.
      return { requeueAfterMs: Math.min(requeueAfterMs, recovery?.requeueAfterMs ?? requeueAfterMs) };
    },
  });
}

/** Whether the members all run a newer minor than the cluster version status records. */
function clusterVersionLags(status: { currentVersion?: string; clusterVersion?: string }): boolean {
  const { currentVersion, clusterVersion } = status;
  return !!currentVersion && !!clusterVersion && minorOf(currentVersion) !== minorOf(clusterVersion);
}

/** The message of a condition of `cluster` as last written, '' without one. */
function conditionMessage(cluster: EtcdCluster, type: string): string {
  return cluster.status?.conditions?.find((c) => c.type === type)?.message ?? '';
}

/** When the newest Succeeded EtcdBackup of `cluster` finished, if any. */
function newestBackupFinish(backups: readonly EtcdBackup[], cluster: EtcdCluster): Date | undefined {
  const times = backups
    .filter(
      (b) =>
        b.metadata?.namespace === namespaceOf(cluster) &&
        b.spec.clusterName === nameOf(cluster) &&
        b.status?.phase === 'Succeeded' &&
        b.status.finishedAt,
    )
    .map((b) => Date.parse(b.status?.finishedAt ?? ''))
    .filter((t) => !Number.isNaN(t));
  return times.length ? new Date(Math.max(...times)) : undefined;
}

// The steps that drive an EtcdCluster's members, one at a time (ADR 0301): seed a new cluster,
// restart members that hold data, heal and converge the membership, roll an upgrade, maintain a
// settled cluster. Each takes the round and what etcd showed; a step that cannot go on throws a
// Refusal (refusal.ts), and the Events say what was done.
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import type { V1Pod } from '@kubernetes/client-node';
import { builtin } from '@homeostat/reconcile';
import type { EtcdBackup } from '../api/etcd-backup-types.ts';
import { EtcdEngineError } from '../errors.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { memberIdHex } from '../member-id.ts';
import { normalizeUrl } from '../membership/members.ts';
import {
  reconcileMembershipStep,
  replaceMember,
  type DesiredMember,
  type StepOutcome,
} from '../membership/membership-reconciler.ts';
import { prepareRestore } from './backup/prepare-restore.ts';
import { RestoreRefusal, restoreSourceOfBackup } from './backup/restore-source.ts';
import { memberOfClaim } from './claim-retention.ts';
import { maintainCluster } from './cluster-maintenance.ts';
import { claimName, nameOf, namespaceOf, ordinalOf, seedMemberId } from './cluster-names.ts';
import { versionRank } from './cluster-status.ts';
import { claimMemberId } from './desired-member-claim.ts';
import { deleteMemberObjects, ensureMemberObjects, kubeMemberRuntime } from './kube-member-runtime.ts';
import { Refusal } from './refusal.ts';
import { rollUpgradeStep, type UpgradeOutcome } from './rolling-upgrade.ts';
import type { Round } from './round.ts';

/**
 * A new cluster: member 0 alone, as a new etcd cluster (ADR 0301: seed, then grow); from a verified
 * backup when the spec says bootstrap.fromBackup (ADR 0302), checked once, before its pod exists.
 */
export async function seed(round: Round, operatorImage: string, fromBackup?: EtcdBackup): Promise<void> {
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
  await round.ctx.writes.step(`creating member ${first.name}`, () =>
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
export async function restartMembers(round: Round): Promise<void> {
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
    const made = await round.ctx.writes.step(`recreating pod ${member.name}`, () =>
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

/** The desired member `listed` is, by its peer URLs (undefined: one nobody wants). */
function desiredOf(round: Round, listed: MemberHealth): DesiredMember | undefined {
  return round.desired.find((d) =>
    listed.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(d.peerUrl)),
  );
}

/**
 * Members etcd lists as started whose pods or claims are gone: a missing pod is made again (its
 * claim still holds the data); a claim deleted or being deleted means the data is lost, so the
 * member is replaced once removing it is safe (then its pod goes first, which lets a claim in use
 * finish deleting); until then it serves on and the status says why it waits.
 */
async function healMembers(round: Round, health: ClusterHealth): Promise<StepOutcome | undefined> {
  const { cluster, deps, ctx } = round;
  const initialCluster = health.members
    .map((m) => desiredOf(round, m))
    .map((desired) => (desired ? `${desired.name}=${desired.peerUrl}` : undefined))
    .filter(Boolean)
    .join(',');
  let waiting: Refusal | undefined;
  for (const listed of health.members.filter((m) => m.member.started)) {
    const desired = desiredOf(round, listed);
    if (!desired) continue;
    const claim = deps.owned.claim(cluster, claimName(desired.name));
    // A claim being deleted is data about to go (it waits only for the pod to let go of it).
    if (!claim || claim.metadata?.deletionTimestamp) {
      // Replacing needs a membership change, which needs quorum: without it the member waits (a
      // lost majority is the recovery's, quorum-recovery.ts), and the status still gets written.
      if (!health.hasQuorum) continue;
      const replaced = await replaceLostMember(round, desired);
      if (!(replaced instanceof Refusal)) return replaced;
      waiting ??= replaced;
      continue;
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

/**
 * Replaces a member whose claim is gone, so its data is lost. The engine's refusal comes back as a
 * value: refused before anything was stopped, the member serves on while its claim waits, and the
 * other members are still looked after; the status and an Event say why.
 */
async function replaceLostMember(round: Round, desired: DesiredMember): Promise<StepOutcome | Refusal> {
  try {
    await replaceMember(round.connection, desired, {
      runtime: kubeMemberRuntime(round.deps),
      allowTwoMemberRemoval: false,
    });
  } catch (error) {
    if (!(error instanceof EtcdEngineError)) throw error;
    return new Refusal(
      error.reason,
      `${desired.name} lost its data (its claim is deleted) but is not replaced yet: ${error.message}`,
      { cause: error },
    );
  }
  await round.ctx.events.warning(
    round.cluster,
    'MemberReplaced',
    'Replace',
    `the claim of ${desired.name} is deleted, so its data is lost: removed it from etcd; it joins again empty as a learner`,
  );
  return { kind: 'changed', action: 'remove', member: desired.name };
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
      await round.ctx.writes.step(`deleting the pod and claim of ${name}`, () =>
        deleteMemberObjects(deps, name),
      );
    }
  }
}

const stepEvents: Record<string, { reason: string; note: (m: string) => string }> = {
  'add-learner': { reason: 'MemberAdded', note: (m) => `added ${m} to etcd as a learner` },
  promote: { reason: 'MemberPromoted', note: (m) => `promoted ${m} to a voting member` },
  remove: { reason: 'MemberRemoved', note: (m) => `removed ${m} from etcd` },
};

export async function convergeMembers(round: Round, health: ClusterHealth): Promise<StepOutcome> {
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
export async function upgradeMembers(round: Round, health: ClusterHealth): Promise<UpgradeOutcome> {
  const outcome = await round.ctx.writes.step('upgrading a member', () =>
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
  if (outcome.kind === 'recreated' && outcome.restart?.first) {
    await round.ctx.events.normal(
      round.cluster,
      'RestartRequested',
      'Restart',
      `restarting every member, one at a time and the leader last (${restartedAtAnnotation}=${outcome.restart.requestedAt})`,
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
export async function maintain(round: Round, health: ClusterHealth): Promise<void> {
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

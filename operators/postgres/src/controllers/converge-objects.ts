// Writes what a cluster is made of: Secrets (created once), Services, PodDisruptionBudgets,
// claims and pods, and the routing label of each pod when no failover or switchover is moving it
// (`routed` beside a role label a pod already has, whatever is in progress, unless it is fenced).
// Zero writes when everything is as wanted. A refused write does not stop the ones after it (each
// backs off on its own, ctx.writes); the refusals are the caller's to report (ADR 0603).
import { restartRequest } from '@homeostat/operator-kit';
import type { V1PersistentVolumeClaim, V1Pod, V1Secret } from '@kubernetes/client-node';
import { builtin, isControlledBy, type KubeClient, type ReconcileContext } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { FailoverState } from '../failover/failover-state.ts';
import { instanceName, ordinalOf } from './cluster-names.ts';
import { desiredClaim } from './desired-claim.ts';
import { desiredDisruptionBudgets } from './desired-pdbs.ts';
import { desiredInstancePod, instancePodSpec, specHash } from './desired-pod.ts';
import { adopting, missingPodRole, primaryOf } from './missing-pod-role.ts';
import { ensureClusterTls, secretText } from './cluster-tls.ts';
import { clientSecretNames, desiredSecrets, superuserSecret } from './desired-secrets.ts';
import { isRetainedFor, withoutOwner } from './retained-secrets.ts';
import { desiredServices } from './desired-services.ts';
import { markRouted, setPodRole, type PodRole } from './kubernetes-world.ts';
import { annotationKeys, labelKeys } from './operand-labels.ts';
import { isFencedPod } from './fenced-instances.ts';
import { fencedInstancesAnnotation } from '../api/fencing-request.ts';
import { assertOwnedOrAbsent } from '@homeostat/reconcile';

export interface ConvergeInputs {
  readonly cluster: PostgresCluster;
  /** The failover engine's state; undefined until the first primary was seen taking writes. */
  readonly state: FailoverState | undefined;
  /** This cluster's instance pods, claims and Secrets, from the label-selected caches. */
  readonly pods: ReadonlyMap<string, V1Pod>;
  readonly claims: ReadonlyMap<string, V1PersistentVolumeClaim>;
  readonly secrets: ReadonlyMap<string, V1Secret>;
  /** Instances on claims an earlier cluster of this name left (retained-claims.ts). */
  readonly retained: readonly string[];
  /** The image for the cluster's PostgreSQL version. */
  readonly image: string;
  /** Writes as the routing field manager. */
  readonly routingClient: KubeClient;
  /** The instances fenced on request (fenced-instances.ts): their pods are fenced. */
  readonly fenced: ReadonlySet<string>;
  /** Fenced on request or still fenced (fenced-instances.ts outOfService): never routed, never rolled. */
  readonly outOfService: ReadonlySet<string>;
}

export interface ConvergeResult {
  /** Pods created in this reconcile. */
  readonly created: readonly string[];
  /** Pods running an older spec. */
  readonly restartPending: readonly string[];
  /** Instances beyond spec.instances still there (the primary among them waits for a switchover). */
  readonly surplus: readonly string[];
}

export async function convergeObjects(
  inputs: ConvergeInputs,
  ctx: ReconcileContext,
): Promise<ConvergeResult> {
  const { cluster, state, pods, claims, secrets, fenced: fencedOnRequest, outOfService } = inputs;
  const name = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? 'default';
  const { client, cache, events, writes } = ctx;

  // Secrets: created once with fresh passwords, never rewritten (the database holds them). With
  // Retain they have no owner, like the claims, and one left by an earlier cluster of this name
  // is this cluster's: its data holds the same passwords (ADR 0211).
  // TLS first, so the client Secrets are made with the CA: the cluster's CA and its instances'
  // serving certificate (ADR 0214). Owned, even with Retain: a cluster created again gets a new
  // CA, which nothing on the retained data depends on.
  const tls = await writes.attempt('making the TLS Secrets', () =>
    ensureClusterTls(cluster, client, secrets),
  );
  for (const made of tls?.made ?? [])
    await events.normal(cluster, 'SecretCreated', 'Create', `created Secret ${made}`);
  for (const renewed of tls?.renewed ?? [])
    await events.normal(
      cluster,
      'CertificateRenewed',
      'Update',
      `issued the certificate in Secret ${renewed} again before it expires`,
    );
  if (tls?.caMissing) await events.warning(cluster, 'CertificateAuthorityMissing', 'Create', tls.caMissing);
  const ca = tls?.ca;

  const retain = cluster.spec.storage.retention === 'Retain';
  for (const secret of desiredSecrets(cluster, undefined, ca)) {
    const secretName = secret.metadata?.name ?? '';
    const current = secrets.get(secretName) ?? (await client.find(builtin.secrets, secretName, namespace));
    if (!(retain && current && isRetainedFor(current, cluster)))
      assertOwnedOrAbsent(current, cluster, 'Secret');
    if (current && retain && isControlledBy(current, cluster)) {
      // Read afresh: the cache may not have seen this patch made a moment ago, and its
      // resourceVersion would make the guarded patch fail for nothing.
      await writes.attempt(`keeping Secret ${secretName} for storage.retention Retain`, async () => {
        const live = await client.find(builtin.secrets, secretName, namespace);
        if (live && isControlledBy(live, cluster))
          await client.patch(builtin.secrets, secretName, namespace, withoutOwner(live, cluster));
        return true;
      });
    }
    if (!current) {
      const made = await writes.attempt(`creating Secret ${secretName}`, () =>
        client.create(builtin.secrets, secret),
      );
      if (made) await events.normal(cluster, 'SecretCreated', 'Create', `created Secret ${secretName}`);
    } else if (ca && clientSecretNames(name).includes(secretName) && secretText(current, 'ca.crt') !== ca) {
      // The CA a client verifies with follows the cluster's; nothing else in the Secret changes
      // (its password is the database's, its uri is what applications were given).
      await writes.attempt(`adding the CA to Secret ${secretName}`, () =>
        client.patch(builtin.secrets, secretName, namespace, {
          data: { 'ca.crt': Buffer.from(ca).toString('base64') },
        }),
      );
    }
  }
  const superuser = superuserSecret(cluster, '').metadata?.name ?? '';
  const published = secrets.get(superuser);
  if (
    !cluster.spec.superuserAccess &&
    published &&
    (isControlledBy(published, cluster) || isRetainedFor(published, cluster))
  ) {
    const deleted = await writes.attempt(`deleting Secret ${superuser}`, async () => {
      await client.delete(builtin.secrets, superuser, namespace, { uid: published.metadata?.uid ?? '' });
      return true;
    });
    if (deleted)
      await events.normal(
        cluster,
        'SecretDeleted',
        'Delete',
        `deleted Secret ${superuser}: superuserAccess is off`,
      );
  }

  for (const service of desiredServices(cluster)) {
    const serviceName = service.metadata?.name ?? '';
    const current = cache.get(builtin.services, serviceName, namespace);
    assertOwnedOrAbsent(current, cluster, 'Service');
    await writes.attempt(`applying Service ${serviceName}`, () =>
      client.applyIfChanged(builtin.services, service, current),
    );
  }

  const budgets = desiredDisruptionBudgets(cluster);
  for (const budget of budgets) {
    const budgetName = budget.metadata?.name ?? '';
    const current = cache.get(builtin.podDisruptionBudgets, budgetName, namespace);
    assertOwnedOrAbsent(current, cluster, 'PodDisruptionBudget');
    await writes.attempt(`applying PodDisruptionBudget ${budgetName}`, () =>
      client.applyIfChanged(builtin.podDisruptionBudgets, budget, current),
    );
  }
  const wantedBudgets = new Set(budgets.map((b) => b.metadata?.name));
  for (const current of cache.list(builtin.podDisruptionBudgets, namespace)) {
    const budgetName = current.metadata?.name ?? '';
    if (wantedBudgets.has(budgetName) || !isControlledBy(current, cluster)) continue;
    await writes.attempt(`deleting PodDisruptionBudget ${budgetName}`, () =>
      client.delete(builtin.podDisruptionBudgets, budgetName, namespace, {
        uid: current.metadata?.uid ?? '',
      }),
    );
  }

  const primary = primaryOf(name, state);
  const operation = state?.operation;
  const created: string[] = [];
  for (let ordinal = 0; ordinal < cluster.spec.instances; ordinal++) {
    const instance = instanceName(name, ordinal);
    const claim = desiredClaim(cluster, instance);
    const currentClaim = claims.get(instance);
    const claimStep = `applying PersistentVolumeClaim ${instance}`;
    if (currentClaim && cluster.spec.storage.retention === 'Delete') {
      assertOwnedOrAbsent(currentClaim, cluster, 'PersistentVolumeClaim');
    }
    await writes.attempt(claimStep, () =>
      client.applyIfChanged(builtin.persistentVolumeClaims, claim, currentClaim),
    );
    // A claim that cannot be made gets no pod; one that cannot be resized serves on as it is.
    if (pods.has(instance) || (!currentClaim && writes.failures.some((f) => f.step === claimStep))) continue;
    const placement = {
      state,
      clusterName: name,
      instances: cluster.spec.instances,
      retained: inputs.retained,
    };
    // A fenced instance's pod starts no PostgreSQL, so it can always be made again, in the role
    // it holds: unfenced, it comes back as that instance, the primary included.
    const fencedNow = fencedOnRequest.has(instance);
    const role =
      missingPodRole(instance, placement) ??
      (fencedNow ? (instance === primaryOf(name, state) ? 'primary' : 'replica') : undefined);
    if (!role) continue;
    const retainedData = adopting(placement);
    const pod = desiredInstancePod(cluster, instance, {
      image: inputs.image,
      role,
      ...(fencedNow ? { fenced: true } : {}),
      // Retained data: a primary it held must not be replaced by an empty one.
      initdb: state || retainedData ? 'refused' : 'allowed',
      ...(retainedData ? { retained: true } : {}),
    });
    if (await writes.attempt(`creating Pod ${instance}`, () => client.apply(builtin.pods, pod))) {
      created.push(instance);
    }
  }
  if (created.length) {
    await events.normal(cluster, 'InstancesCreated', 'Create', `created ${created.join(', ')}`);
  }

  await convergeFencing(cluster, pods, fencedOnRequest, inputs.routingClient, ctx);

  // Routing labels, when no operation is moving them: the primary gets `primary`, the rest `replica`.
  // None while retained data is adopted: which instance is primary is not known yet, and a pod
  // labelled primary would restart as one (its role annotation follows the label).
  if (!operation && !adopting({ state, retained: inputs.retained })) {
    for (const [podName, pod] of pods) {
      if (pod.metadata?.deletionTimestamp || outOfService.has(podName)) continue;
      const want: PodRole = podName === primary ? 'primary' : 'replica';
      const labels = pod.metadata?.labels;
      // A pod labelled before the -r Service selected `routed` gets it here too.
      if (labels?.[labelKeys.role] === want && labels[labelKeys.routed] === 'true') continue;
      await writes.attempt(`labelling Pod ${podName} ${want}`, () =>
        setPodRole(
          inputs.routingClient,
          namespace,
          podName,
          want,
          pod.metadata?.annotations?.[annotationKeys.instanceRole],
        ),
      );
    }
  }

  // `routed` beside a role label the pod already has, whatever else is going on: a pod labelled
  // before the -r Service selected `routed` (ADR 0210) must not leave -r because an operation is in
  // progress (maybe stuck) or the label write above was refused. Never on a fenced instance, and
  // only as the pod is now (read afresh, applied at that version): only fencing and routing unroute.
  const fenced = new Set(operation?.fenced ?? []);
  for (const [podName, pod] of pods) {
    if (pod.metadata?.deletionTimestamp || fenced.has(podName) || outOfService.has(podName)) continue;
    if (!unroutedRole(pod)) continue;
    await writes.attempt(`labelling Pod ${podName} routed`, async () => {
      const live = await client.find(builtin.pods, podName, namespace);
      const role = live && !live.metadata?.deletionTimestamp ? unroutedRole(live) : undefined;
      const resourceVersion = live?.metadata?.resourceVersion;
      if (!role || !resourceVersion) return true;
      await markRouted(inputs.routingClient, namespace, podName, {
        role,
        annotation: live.metadata?.annotations?.[annotationKeys.instanceRole],
        resourceVersion,
      });
      return true;
    });
  }

  const hash = specHash(instancePodSpec(cluster, inputs.image), restartRequest(cluster));
  // A fenced instance restarts onto the new spec once unfenced: its PostgreSQL is stopped meanwhile.
  const restartPending = [...pods.values()]
    .filter((p) => p.metadata?.annotations?.[annotationKeys.specHash] !== hash)
    .filter((p) => !outOfService.has(p.metadata?.name ?? ''))
    .map((p) => p.metadata?.name ?? '')
    .sort();
  const beyond = (instance: string) => (ordinalOf(name, instance) ?? 0) >= cluster.spec.instances;
  const surplus = [...new Set([...pods.keys(), ...claims.keys()])].filter(beyond).sort();
  // Scaling down: an instance beyond spec.instances goes with its claim (a claim left behind would
  // give a later instance of that name data from another timeline). The primary waits for a
  // switchover, which the controller asks the failover engine for.
  const removed: string[] = [];
  // Not while retained data is adopted: the primary is not chosen yet.
  const choosing = adopting({ state, retained: inputs.retained });
  for (const instance of surplus) {
    if (instance === primary || operation || choosing) continue;
    const pod = pods.get(instance);
    if (pod && !pod.metadata?.deletionTimestamp) {
      const gone = await writes.attempt(`deleting Pod ${instance}`, async () => {
        await client.delete(builtin.pods, instance, namespace, { uid: pod.metadata?.uid ?? '' });
        return true;
      });
      // The claim goes after its pod, as before: a refused pod deletion keeps both.
      if (!gone) continue;
    }
    const claim = claims.get(instance);
    if (claim && !claim.metadata?.deletionTimestamp) {
      const gone = await writes.attempt(`deleting PersistentVolumeClaim ${instance}`, async () => {
        await client.delete(builtin.persistentVolumeClaims, instance, namespace, {
          uid: claim.metadata?.uid ?? '',
        });
        return true;
      });
      if (!gone) continue;
    }
    if (pod || claim) removed.push(instance);
  }
  if (removed.length) {
    await events.normal(
      cluster,
      'InstancesRemoved',
      'Scale',
      `removed ${removed.join(', ')} and their claims`,
    );
  }
  return { created, restartPending, surplus: surplus.filter((instance) => !removed.includes(instance)) };
}

/**
 * Each pod's fence as the request wants it: a pod to fence leaves every Service first (its routing
 * labels go, ADR 0210), then gets the fence annotation its containers act on; a pod to unfence
 * loses the annotation, and is routed again by the loops above once its instance is back. Each
 * change only if the pod is still as read (its resourceVersion), never on a pod that is going.
 */
async function convergeFencing(
  cluster: PostgresCluster,
  pods: ReadonlyMap<string, V1Pod>,
  fenced: ReadonlySet<string>,
  routingClient: KubeClient,
  { client, events, writes }: ReconcileContext,
): Promise<void> {
  const namespace = cluster.metadata?.namespace ?? 'default';
  for (const [podName, pod] of pods) {
    const want = fenced.has(podName);
    if (pod.metadata?.deletionTimestamp) continue;
    // Unrouted whenever it carries a role label, not only when first fenced: a failover's routing
    // may label every instance it finds.
    if (want && pod.metadata?.labels?.[labelKeys.role]) {
      const annotation = pod.metadata.annotations?.[annotationKeys.instanceRole];
      await writes.attempt(`unrouting fenced Pod ${podName}`, async () => {
        await setPodRole(routingClient, namespace, podName, undefined, annotation);
        return true;
      });
    }
    if (want === isFencedPod(pod)) continue;
    const done = await writes.attempt(`${want ? 'fencing' : 'unfencing'} Pod ${podName}`, async () => {
      const live = await client.find(builtin.pods, podName, namespace);
      if (!live || live.metadata?.deletionTimestamp) return false;
      await client.patch(builtin.pods, podName, namespace, {
        metadata: {
          resourceVersion: live.metadata?.resourceVersion,
          annotations: want
            ? { [annotationKeys.fenced]: 'true' }
            : { [annotationKeys.fenced]: null, [annotationKeys.unfencedAt]: new Date().toISOString() },
        },
      });
      return true;
    });
    if (!done) continue;
    if (want) {
      await events.normal(
        cluster,
        'InstanceFenced',
        'Fence',
        `fenced ${podName} on request (${fencedInstancesAnnotation}): no Service routes to it, PostgreSQL stops and stays stopped, the pod and its data stay as they are`,
      );
    } else {
      await events.normal(
        cluster,
        'InstanceUnfenced',
        'Fence',
        `unfenced ${podName}: PostgreSQL starts again in it, and it is routed once it is back in its role`,
      );
    }
  }
}

/** The role label of a pod that has one but not `routed` beside it. */
function unroutedRole(pod: V1Pod): 'primary' | 'replica' | undefined {
  const labels = pod.metadata?.labels;
  const role = labels?.[labelKeys.role];
  if (labels?.[labelKeys.routed] === 'true') return undefined;
  return role === 'primary' || role === 'replica' ? role : undefined;
}

// What the failover engine needs from Kubernetes (actions.ts), done with pods: routing is the role
// label (moved by its own field manager), fencing is unrouting then deleting the pod at once, a
// clean stop is a normal pod deletion (the preStop hook runs a fast shutdown), and a rejoin is
// leaving the pod to be created again as a replica once the operation is over (ADR 0202).
import { setTimeout as sleep } from 'node:timers/promises';
import { builtin, isNotFound, objectPath, type KubeClient } from '@homeostat/reconcile';
import type { Fencing, InstanceActions, Routing } from '../failover/actions.ts';
import type { InstanceEndpoint } from '../instance/instance.ts';
import { annotationKeys, labelKeys } from './operand-labels.ts';

export interface PodWorldOptions {
  /** Writes as the operator's main field manager (deletions). */
  readonly client: KubeClient;
  /** Writes as `routingFieldManager`: the role label and, on a promoted pod, its role annotation. */
  readonly routingClient: KubeClient;
  readonly namespace: string;
  /** How long a deleted pod may take to go away, and its PostgreSQL to stop answering (default 60 s). */
  readonly goneTimeoutMs?: number;
  /**
   * Whether an instance still answers SQL. Deleting a pod only asks its kubelet to kill it, so a
   * fence resolves once the instance stops answering too (an instance nobody can reach, on a
   * node cut off, answers nobody either).
   */
  readonly answers: (instance: InstanceEndpoint) => Promise<boolean>;
}

export type PodRole = 'primary' | 'replica' | undefined;

/**
 * Sets (or with `undefined`, removes) the routing label of a pod. A primary also gets the role
 * annotation its container's next start reads; elsewhere the annotation is kept as it is.
 */
export async function setPodRole(
  routingClient: KubeClient,
  namespace: string,
  pod: string,
  role: PodRole,
  currentAnnotation: string | undefined,
): Promise<void> {
  const annotation = role === 'primary' ? 'primary' : currentAnnotation;
  await routingClient.apply(builtin.pods, {
    metadata: {
      name: pod,
      namespace,
      labels: role ? { [labelKeys.role]: role, [labelKeys.routed]: 'true' } : {},
      annotations: annotation ? { [annotationKeys.instanceRole]: annotation } : {},
    },
  });
}

/**
 * Adds `routed` beside the role label a pod already carries, moving nothing else: the role and its
 * annotation are applied as they are. Only if the pod is still at `resourceVersion` (the version
 * its labels were read at), so a pod unrouted meanwhile is never routed again.
 */
export async function markRouted(
  routingClient: KubeClient,
  namespace: string,
  pod: string,
  seen: { role: 'primary' | 'replica'; annotation: string | undefined; resourceVersion: string },
): Promise<void> {
  await routingClient.apply(builtin.pods, {
    metadata: {
      name: pod,
      namespace,
      resourceVersion: seen.resourceVersion,
      labels: { [labelKeys.role]: seen.role, [labelKeys.routed]: 'true' },
      annotations: seen.annotation ? { [annotationKeys.instanceRole]: seen.annotation } : {},
    },
  });
}

/** The Fencing, Routing and InstanceActions of one cluster's pods. */
export function podWorld(options: PodWorldOptions): {
  fencing: Fencing;
  routing: Routing;
  actions: InstanceActions;
} {
  const { client, routingClient, namespace } = options;
  const goneTimeoutMs = options.goneTimeoutMs ?? 60_000;

  // Server-side apply would create a pod that is gone (and fail: a pod needs containers), so the
  // pod is read first: a pod that is gone takes no writes and needs no unrouting.
  const setRole = async (instance: InstanceEndpoint, role: PodRole) => {
    const pod = await client.find(builtin.pods, instance.name, namespace);
    if (!pod) {
      if (role === undefined) return;
      throw new Error(`pod ${instance.name} does not exist; writes cannot be routed to it`);
    }
    await setPodRole(
      routingClient,
      namespace,
      instance.name,
      role,
      pod.metadata?.annotations?.[annotationKeys.instanceRole],
    );
  };

  const waitGone = async (pod: string) => {
    const deadline = Date.now() + goneTimeoutMs;
    while ((await client.find(builtin.pods, pod, namespace)) !== undefined) {
      if (Date.now() > deadline)
        throw new Error(`pod ${pod} still exists ${goneTimeoutMs} ms after its deletion`);
      await sleep(100);
    }
  };

  const deletePod = async (pod: string, gracePeriodSeconds: number | undefined) => {
    try {
      // KubeClient.delete takes no grace period; the transport sends the DeleteOptions as written.
      await client.transport.json({
        method: 'DELETE',
        path: objectPath(builtin.pods, pod, namespace),
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
        },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    await waitGone(pod);
  };

  return {
    routing: {
      withdrawWrites: (instance) => setRole(instance, undefined),
      routeWritesTo: (primary) => setRole(primary, 'primary'),
    },
    fencing: {
      async fence(instance) {
        await setRole(instance, undefined);
        await deletePod(instance.name, 0);
        const deadline = Date.now() + goneTimeoutMs;
        while (await options.answers(instance)) {
          if (Date.now() > deadline) {
            throw new Error(
              `${instance.name} still answers SQL ${goneTimeoutMs} ms after its pod was deleted`,
            );
          }
          await sleep(100);
        }
      },
    },
    actions: {
      stopCleanly: (instance) => deletePod(instance.name, undefined),
      // The controller creates the pod again, as a replica, once the operation is over.
      rejoinAsReplica: (instance) => deletePod(instance.name, 0),
    },
  };
}

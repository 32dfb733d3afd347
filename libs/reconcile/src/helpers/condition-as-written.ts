// What a condition says as this process last wrote it. A reconcile decides from the informer
// cache, which shows a status write only once its watch event arrives; the next reconcile may come
// sooner (a requeue, a child's change). A problem reported once while it lasts (an Event only when
// Degraded does not say it yet) must be compared with what was written, or it is said twice.
import type { KubeClient, CallOptions } from '../client/kube-client.ts';
import type { KubeObject, ResourceType } from '../client/resource-type.ts';
import { findCondition, type Condition } from './conditions.ts';

/** An object whose status carries conditions. */
export interface WithConditions extends KubeObject {
  status?: { conditions?: Condition[] | undefined } | undefined;
}

/**
 * Condition `conditionType` of the object: from `copy` when it is at least this process's last
 * write of it, else from the object read afresh (one GET, only after a write the cache has not
 * shown yet); undefined when the condition is absent or the object gone.
 */
export async function conditionAsWritten<T extends WithConditions>(
  client: KubeClient,
  type: ResourceType<T>,
  copy: T,
  conditionType: string,
  call?: CallOptions,
): Promise<Condition | undefined> {
  const latest = await client.latest(type, copy, call);
  return findCondition(latest?.status?.conditions, conditionType);
}

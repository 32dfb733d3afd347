// A throwaway round of the Widget workload, written by the driver itself before any operator
// runs: the API server's first writes of each kind and verb cost more (CEL programs, managedFields
// type converters, watch caches, its own heap growing), and etcd's first thousands of keys too.
// Neither operator should pay for them, so the driver pays before both.
import {
  type KubeClient,
  builtin,
  collectionPath,
  resourceType,
  type KubeObject,
  type ResourceType,
} from '@homeostat/reconcile';
import { widgets } from '../../libs/reconcile/src/test-support/widget.ts';
import { widgetSpec } from './widget-workload.ts';

// An events.k8s.io Event as the operators send it (eventTime a MicroTime string).
interface WarmUpEvent extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: string;
  regarding: { apiVersion: string; kind: string; name: string; namespace: string; uid?: string | undefined };
}
const events = resourceType<WarmUpEvent>('events.k8s.io/v1', 'Event', 'events');

/** Deletes every object of a kind in a namespace (there is no garbage collector on our own control plane). */
export async function deleteAll(client: KubeClient, type: ResourceType, namespace: string): Promise<void> {
  await client.transport.json({ method: 'DELETE', path: collectionPath(type, namespace) });
}

/**
 * Writes what both operators write for `objects` Widgets (the Widget, its ConfigMap by server-side
 * apply, an events.k8s.io Event, its status by server-side apply), `concurrency` at a time, then
 * deletes all of it.
 */
export async function warmUpControlPlane(
  client: KubeClient,
  objects: number,
  concurrency: number,
): Promise<void> {
  const namespace = `bench-warmup-${Date.now()}`;
  await client.create(builtin.namespaces, { metadata: { name: namespace } });
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < objects) {
        const i = next++;
        const name = `w-${i}`;
        const spec = widgetSpec(i);
        const widget = await client.create(widgets, { metadata: { name, namespace }, spec });
        await client.apply(builtin.configMaps, {
          metadata: { name: `${name}-gizmos`, namespace },
          data: { size: String(spec.size) },
        });
        await client.create(events, {
          metadata: { name: `${name}.warm-up`, namespace },
          eventTime: new Date().toISOString().replace(/Z$/, '000Z'),
          reportingController: 'bench',
          reportingInstance: 'bench',
          action: 'WarmUp',
          reason: 'WarmUp',
          type: 'Normal',
          regarding: {
            apiVersion: widgets.apiVersion,
            kind: widgets.kind,
            name,
            namespace,
            uid: widget.metadata?.uid,
          },
        });
        await client.applyStatus(widgets, { metadata: { name, namespace }, status: { gizmos: spec.size } });
      }
    }),
  );
  for (const type of [widgets, builtin.configMaps, events]) await deleteAll(client, type, namespace);
  await client.delete(builtin.namespaces, namespace);
}

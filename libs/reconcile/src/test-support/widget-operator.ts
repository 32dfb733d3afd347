// The operator used by the library's integration tests and its benchmark: a Widget owns one
// ConfigMap holding its size, carries a finalizer, and reports status with a Ready condition.
import type { Logger } from 'pino';
import type { ClusterSource } from '../client/cluster-access.ts';
import { builtin } from '../client/resource-type.ts';
import { Manager, type ManagerOptions } from '../manager/manager.ts';
import { controllerReference } from '../helpers/owner-references.ts';
import { addFinalizer, isBeingDeleted, removeFinalizer } from '../helpers/finalizers.ts';
import { setCondition } from '../helpers/conditions.ts';
import { generationChanged } from '../controller/predicates.ts';
import type { ReconcileContext } from '../controller/controller.ts';
import { widgets } from './widget.ts';

export const widgetFinalizer = 'test.reconcile.homeostat.dev/cleanup';

export interface WidgetOperatorHooks {
  /** Runs at the start of every reconcile (tests use it to count, delay or fail). */
  beforeReconcile?: (name: string, ctx: ReconcileContext) => Promise<void>;
  /** Resolves when the finalizer may be removed (tests hold deletion with it). */
  cleanupGate?: () => Promise<void>;
  /** Put a finalizer on each Widget. Default true; the benchmark turns it off. */
  finalizer?: boolean;
}

/** Builds (but does not start) a manager running the Widget controller. */
export function widgetOperator(
  kubeConfig: ClusterSource,
  options: Partial<ManagerOptions> & {
    logger?: Logger;
    maxConcurrentReconciles?: number;
    slowReconcileWarningMs?: number;
  } = {},
  hooks: WidgetOperatorHooks = {},
): Manager {
  const manager = new Manager({ kubeConfig, name: 'widget-operator', ...options });
  manager.controller({
    name: 'widget',
    for: widgets,
    owns: [builtin.configMaps],
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    ...(options.slowReconcileWarningMs ? { slowReconcileWarningMs: options.slowReconcileWarningMs } : {}),
    async reconcile({ namespace = 'default', name, object }, ctx) {
      await hooks.beforeReconcile?.(name, ctx);
      if (!object) return; // deleted; its ConfigMap goes with it (ownerReference)
      let widget = object;
      if (isBeingDeleted(widget)) {
        await hooks.cleanupGate?.();
        await removeFinalizer(ctx.client, widgets, widget, widgetFinalizer);
        return;
      }
      if (hooks.finalizer ?? true) widget = await addFinalizer(ctx.client, widgets, widget, widgetFinalizer);

      const desired = {
        metadata: {
          name: `${name}-gizmos`,
          namespace,
          ...(widget.spec.labels ? { labels: widget.spec.labels } : {}),
          ownerReferences: [controllerReference(widget)],
        },
        data: { size: String(widget.spec.size) },
      };
      const live = ctx.cache.get(builtin.configMaps, desired.metadata.name, namespace);
      if ((await ctx.client.applyIfChanged(builtin.configMaps, desired, live)).written) {
        await ctx.events.normal(widget, 'GizmosWritten', 'Reconcile', `wrote ${widget.spec.size} gizmos`);
      }

      const status = {
        observedGeneration: widget.metadata?.generation ?? 0,
        gizmos: widget.spec.size,
        conditions: setCondition(
          widget.status?.conditions,
          { type: 'Ready', status: 'True', reason: 'GizmosWritten', message: `${widget.spec.size} gizmos` },
          widget.metadata?.generation,
        ),
      };
      await ctx.client.applyStatusIfChanged(widgets, { metadata: { name, namespace }, status }, widget);
      return undefined;
    },
  });
  return manager;
}

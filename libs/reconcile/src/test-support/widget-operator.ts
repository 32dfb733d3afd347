// The operator used by the library's integration tests and its benchmark: a Widget owns one
// ConfigMap holding its size, carries a finalizer, and reports status with a Ready condition.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { builtin, type KubeObject } from '../client/resource-type.ts';
import { Manager, type ManagerOptions } from '../manager/manager.ts';
import { controllerReference } from '../helpers/owner-references.ts';
import { addFinalizer, isBeingDeleted, removeFinalizer } from '../helpers/finalizers.ts';
import { setCondition } from '../helpers/conditions.ts';
import { isSubset } from '../helpers/desired-state.ts';
import { generationChanged } from '../controller/predicates.ts';
import type { ReconcileContext } from '../controller/controller.ts';
import { widgets, type Widget } from './widget.ts';

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
  kubeConfig: KubeConfig,
  options: Partial<ManagerOptions> & { logger?: Logger; maxConcurrentReconciles?: number } = {},
  hooks: WidgetOperatorHooks = {},
): Manager {
  const manager = new Manager({ kubeConfig, name: 'widget-operator', ...options });
  manager.controller({
    name: 'widget',
    for: widgets,
    owns: [builtin.configMaps],
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ namespace, name }, ctx) {
      await hooks.beforeReconcile?.(name, ctx);
      let widget = ctx.cache.get(widgets, name, namespace);
      if (!widget) return; // deleted; its ConfigMap goes with it (ownerReference)
      if (isBeingDeleted(widget)) {
        await hooks.cleanupGate?.();
        await removeFinalizer(ctx.client, widgets, widget, widgetFinalizer);
        return;
      }
      if (hooks.finalizer ?? true) widget = await addFinalizer(ctx.client, widgets, widget, widgetFinalizer);

      const desired = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `${name}-gizmos`,
          namespace: namespace ?? 'default',
          ownerReferences: [controllerReference(widget)],
        },
        data: { size: String(widget.spec.size) },
      };
      const current = ctx.cache.get(builtin.configMaps, desired.metadata.name, namespace);
      if (!isSubset(desired, current)) {
        await ctx.client.apply(builtin.configMaps, desired);
        await ctx.events.normal(widget, 'GizmosWritten', 'Reconcile', `wrote ${widget.spec.size} gizmos`);
      }

      const status: Widget['status'] = {
        observedGeneration: widget.metadata?.generation ?? 0,
        gizmos: widget.spec.size,
        conditions: setCondition(
          widget.status?.conditions,
          { type: 'Ready', status: 'True', reason: 'GizmosWritten', message: `${widget.spec.size} gizmos` },
          widget.metadata?.generation,
        ),
      };
      if (!isSubset(status, widget.status)) {
        await ctx.client.applyStatus(widgets, { metadata: { name, namespace }, status } as Widget &
          KubeObject);
      }
      return undefined;
    },
  });
  return manager;
}

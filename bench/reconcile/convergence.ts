// Watches a namespace's Widgets and notes the moment the last one converges (a watch, not a
// poll: the time is exact and a 10000-object list every second would load the API server).
import { pino } from 'pino';
import { Informer, type KubeClient } from '@homeostat/reconcile';
import { widgets, type Widget } from '../../libs/reconcile/src/test-support/widget.ts';
import { isConverged } from './widget-workload.ts';

export interface ConvergenceWatch {
  /** How many Widgets are converged now. */
  count(): number;
  /** Resolves with performance.now() when `objects` Widgets are converged. */
  readonly all: Promise<number>;
  stop(): Promise<void>;
}

/** Starts watching; resolves once the watch has listed the namespace. */
export async function watchConvergence(
  client: KubeClient,
  namespace: string,
  objects: number,
): Promise<ConvergenceWatch> {
  const informer = new Informer(client, widgets, pino({ level: 'warn' }), { namespaces: [namespace] });
  const converged = new Set<string>();
  let reached: (at: number) => void = () => undefined;
  const all = new Promise<number>((resolve) => (reached = resolve));
  const see = (widget: Widget) => {
    const name = widget.metadata?.name ?? '';
    if (isConverged(widget)) converged.add(name);
    else converged.delete(name);
    if (converged.size === objects) reached(performance.now());
  };
  informer.addListener({
    onAdd: see,
    onUpdate: (_old, widget) => see(widget),
    onDelete: (widget) => converged.delete(widget.metadata?.name ?? ''),
  });
  informer.start();
  await informer.waitForSync();
  return { count: () => converged.size, all, stop: () => informer.stop() };
}

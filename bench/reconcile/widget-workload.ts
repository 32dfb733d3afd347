// The Widgets the benchmark creates, and when one counts as converged.
import type { Widget } from '../../libs/reconcile/src/test-support/widget.ts';

/**
 * The i-th Widget's spec: sizes 0 to 49. The Widget's CEL rule lets only blue Widgets have more
 * than 10 gizmos, so every benchmark Widget is blue (a Widget without a color above 10 is refused).
 */
export function widgetSpec(i: number): Widget['spec'] {
  return { size: i % 50, color: 'blue' };
}

/** The operator has written this Widget's current spec into its status. */
export function isConverged(widget: Widget): boolean {
  return (
    widget.status?.gizmos === widget.spec.size &&
    widget.status.observedGeneration === widget.metadata?.generation
  );
}

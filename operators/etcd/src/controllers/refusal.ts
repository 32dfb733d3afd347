// What stops an EtcdCluster reconcile's phases: a Refusal, reported as Degraded and a Warning Event
// (etcd-cluster-reconciler.ts), and the write an engine step cannot go on without.
import { WriteFailure, type ReconcileContext } from '@homeostat/reconcile';

/**
 * Something keeps the operator from carrying out the spec; becomes Degraded and a Warning Event.
 * `permanent`: only a change of the spec can help (the reconcile is not retried until one comes).
 */
export class Refusal extends Error {
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
export async function writeOrRefuse<T>(
  ctx: ReconcileContext,
  what: string,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await ctx.writes.step(what, action);
  } catch (error) {
    if (!(error instanceof WriteFailure)) throw error;
    throw new Refusal('ApplyFailed', error.message, { cause: error });
  }
}

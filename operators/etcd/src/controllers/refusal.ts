// What stops an EtcdCluster reconcile's phases: a Refusal, reported as Degraded and a Warning Event
// (etcd-cluster-reconciler.ts), or a write a step cannot go on without (the library's WriteFailure,
// from ctx.writes.step or assertOwnedOrAbsent), taken as one.
import { WriteFailure } from '@homeostat/reconcile';

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
 * What ends the phases, as a Refusal: a Refusal itself, or a refused write (its reason: ApplyFailed,
 * or NameTaken for a name someone else holds); undefined for anything else (a bug: thrown on).
 */
export function asRefusal(error: unknown): Refusal | undefined {
  if (error instanceof Refusal) return error;
  if (error instanceof WriteFailure) return new Refusal(error.reason, error.message, { cause: error });
  return undefined;
}

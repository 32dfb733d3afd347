// A write the operator could not make, as a sentence for `kubectl describe`: the step and the API
// server's own message, never the body that was sent (a Secret's would hold passwords). Operators
// turn it into a status condition and a Warning Event, then throw it so the queue backs off.
import { KubeApiError } from '../client/errors.ts';
import type { KubeObject } from '../client/resource-type.ts';
import { isControlledBy } from './owner-references.ts';

export class WriteFailure extends Error {
  constructor(step: string, cause: unknown) {
    const detail =
      cause instanceof KubeApiError
        ? (cause.status.message ?? cause.message)
        : cause instanceof Error
          ? cause.message || cause.name
          : String(cause);
    super(`${step}: ${detail}`, { cause });
    this.name = 'WriteFailure';
  }
}

/** Runs one write; a failure becomes a WriteFailure naming `what` (e.g. "Deployment cache-1"). */
export async function writeStep<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw new WriteFailure(what, error);
  }
}

/**
 * Refuses to adopt an object of the same name that someone else made: throws a WriteFailure when
 * `current` exists and `owner` is not its controller. `kind` is the object's kind, for the message.
 */
export function assertOwnedOrAbsent(current: KubeObject | undefined, owner: KubeObject, kind: string): void {
  if (current && !isControlledBy(current, owner)) {
    throw new WriteFailure(
      `${kind} ${current.metadata?.name ?? ''}`,
      new Error(
        `an object of this name exists and is not controlled by this ${owner.kind ?? 'owner'}; rename or delete it`,
      ),
    );
  }
}

// A write the operator could not make, as a sentence for `kubectl describe` (never the body it sent:
// a Secret's would hold passwords).
import { KubeApiError, isControlledBy, type KubeObject } from '@homeostat/reconcile';
import { errorMessage } from '../instance.ts';

export class WriteFailure extends Error {
  constructor(step: string, cause: unknown) {
    const detail =
      cause instanceof KubeApiError ? (cause.status.message ?? cause.message) : errorMessage(cause);
    super(`${step}: ${detail}`, { cause });
    this.name = 'WriteFailure';
  }
}

/** Runs one write; a failure becomes a WriteFailure naming `what`. */
export async function writeStep<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw new WriteFailure(what, error);
  }
}

/** Refuses to adopt an object of the same name that someone else made. */
export function assertOwnedOrAbsent(current: KubeObject | undefined, owner: KubeObject, kind: string): void {
  if (current && !isControlledBy(current, owner)) {
    throw new WriteFailure(
      `${kind} ${current.metadata?.name ?? ''}`,
      new Error(
        `an object of this name exists and is not controlled by PostgreSQLCluster ${owner.metadata?.name ?? ''}; rename or delete it`,
      ),
    );
  }
}

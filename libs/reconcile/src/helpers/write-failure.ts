// A write the operator could not make, as a sentence for `kubectl describe`: the step and the API
// server's own message, never the body that was sent (a Secret's would hold passwords). Operators
// turn it into a status condition and a Warning Event and go on observing; the write itself is
// retried with its own backoff (controller/write-backoff.ts, ADR 0603).
import { KubeApiError } from '../client/errors.ts';
import type { KubeObject } from '../client/resource-type.ts';
import { isControlledBy } from './owner-references.ts';

export class WriteFailure extends Error {
  readonly step: string;
  /**
   * The condition and Event reason: `ApplyFailed` for a write the API server refused, `NameTaken`
   * for one not sent because someone else holds the name (assertOwnedOrAbsent).
   */
  readonly reason: string;
  /** True when the write was not sent: it still backs off after this same refusal. */
  readonly repeated: boolean;
  constructor(step: string, cause: unknown, options: { repeated?: boolean; reason?: string } = {}) {
    const detail =
      cause instanceof KubeApiError
        ? (cause.status.message ?? cause.message)
        : cause instanceof Error
          ? cause.message || cause.name
          : String(cause);
    super(`${step}: ${detail}`, { cause });
    this.name = 'WriteFailure';
    this.step = step;
    this.reason = options.reason ?? 'ApplyFailed';
    this.repeated = options.repeated ?? false;
  }

  /** The same refusal, reported again without sending the write (same message, `repeated`). */
  repeat(): WriteFailure {
    return new WriteFailure(this.step, this.cause, { repeated: true, reason: this.reason });
  }
}

/**
 * Refuses to adopt an object of the same name that someone else made: throws a WriteFailure
 * (reason `NameTaken`) when `current` exists and `owner` is not its controller. `kind` is the
 * object's kind, for the message.
 */
export function assertOwnedOrAbsent(current: KubeObject | undefined, owner: KubeObject, kind: string): void {
  if (current && !isControlledBy(current, owner)) {
    throw new WriteFailure(
      `${kind} ${current.metadata?.name ?? ''}`,
      new Error(
        `an object of this name exists and is not controlled by this ${owner.kind ?? 'owner'}; rename or delete it`,
      ),
      { reason: 'NameTaken' },
    );
  }
}

/**
 * What refused writes put in a Degraded condition: every refusal's message, and the reason of the
 * first (a name taken is named first by the operators that meet it before any write).
 */
export function refusedWritesProblem(
  refusals: readonly WriteFailure[],
): { reason: string; message: string } | undefined {
  const [first] = refusals;
  if (!first) return undefined;
  return { reason: first.reason, message: refusals.map((f) => f.message).join('; ') };
}

/** Where `warnRefusedWrites` records its Events (an EventRecorder). */
export interface WarningRecorder {
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<void>;
}

/**
 * One Warning Event (its reason: `ApplyFailed`, `NameTaken`) per distinct refused write: none for a refusal repeated while
 * its write waits out its backoff, nor for one `alreadySaid` (the object's Degraded message as last
 * written) names: every reconcile finds such a refusal while it lasts, and an Event each time would
 * patch the Event's series every probe.
 */
export async function warnRefusedWrites(
  events: WarningRecorder,
  regarding: KubeObject,
  refusals: readonly WriteFailure[],
  alreadySaid: string,
): Promise<void> {
  for (const refusal of refusals) {
    if (refusal.repeated || alreadySaid.includes(refusal.message)) continue;
    await events.warning(regarding, refusal.reason, 'Reconcile', refusal.message);
  }
}

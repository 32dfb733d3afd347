import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import { AlreadyExistsError, ConflictError } from '../client/errors.ts';
import { microTime } from '../client/micro-time.ts';
import { resourceType } from '../client/resource-type.ts';
import { sleepUntilAborted } from '../helpers/sleep-until-aborted.ts';

export interface LeaderElectionOptions {
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease (one per operator). */
  leaseName: string;
  /** This replica's identity (pod name); defaults to hostname plus a random suffix. */
  identity: string;
  /** How long a lease holds without renewal. Default 15 s. */
  leaseDurationMs?: number;
  /** A leader that cannot renew for this long steps down. Default 10 s. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface LeaseObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

// Times stay RFC 3339 strings here, exactly as they travel, so they are never reparsed.
const leases = resourceType<LeaseObject>('coordination.k8s.io/v1', 'Lease', 'leases');

/**
 * Lease-based leader election, as client-go does it: expiry is judged by when *this* replica last
 * saw the lease change (never by comparing clocks across machines); writes use optimistic
 * concurrency on resourceVersion; a leader that cannot renew within the renew deadline steps down;
 * stop() releases the lease so a successor need not wait for it to expire.
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #opts: Required<LeaderElectionOptions>;
  readonly #log: Logger;
  #leader = false;
  #observed: { record: string; at: number } | undefined;
  #lease: LeaseObject | undefined;
  /** When the request that last wrote our lease was sent. */
  #renewedAt = 0;

  constructor(client: KubeClient, options: LeaderElectionOptions, log: Logger) {
    this.#opts = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (this.#opts.renewDeadlineMs >= this.#opts.leaseDurationMs) {
      throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    }
    // No retries inside one attempt: the election loop is the retry, and every attempt is bounded
    // by the renew deadline, so a hung request can never keep a leader past its lease.
    this.#client = client.withOptions({
      retry: { attempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
      requestTimeoutMs: this.#opts.renewDeadlineMs,
      rememberWrites: false, // nothing applies the Lease with applyIfChanged
    });
    this.#log = log.child({ lease: `${options.namespace}/${options.leaseName}`, identity: options.identity });
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  get identity(): string {
    return this.#opts.identity;
  }

  /**
   * Acquires the lease (waiting as long as it takes), calls `onStarted`, renews it until
   * `signal` aborts or renewal fails past the deadline; then calls `onStopped` if it had led.
   */
  async run(signal: AbortSignal, onStarted: () => void, onLost: () => void): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.#opts;
    while (!signal.aborted && !(await this.#tryAcquireOrRenew(signal, renewDeadlineMs)))
      await sleepUntilAborted(retryPeriodMs, signal);
    if (signal.aborted) return;
    this.#leader = true;
    this.#log.info('became leader');
    onStarted();
    while (!signal.aborted) {
      await sleepUntilAborted(retryPeriodMs, signal);
      if (signal.aborted) break;
      // The lease we hold was written no earlier than when that request was sent, so nobody can
      // take it over before renewedAt + leaseDuration. Every attempt ends by renewedAt +
      // renewDeadline, leaving (leaseDuration - renewDeadline) to stop the controllers.
      const remaining = this.#renewedAt + renewDeadlineMs - Date.now();
      if (remaining > 0 && (await this.#tryAcquireOrRenew(signal, remaining))) continue;
      if (signal.aborted) break;
      if (Date.now() >= this.#renewedAt + renewDeadlineMs) {
        this.#leader = false;
        this.#log.error({ renewDeadlineMs }, 'could not renew the lease in time; stepping down');
        onLost();
        return;
      }
    }
  }

  /** Gives the lease up (holder cleared), so a successor can take it at once. */
  async release(): Promise<void> {
    if (!this.#leader || !this.#lease) return;
    this.#leader = false;
    try {
      await this.#client.replace(leases, {
        ...this.#lease,
        spec: { ...this.#lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime() },
      });
      this.#log.info('released the lease');
    } catch (error) {
      this.#log.warn({ err: String(error) }, 'could not release the lease; it will expire');
    }
  }

  async #tryAcquireOrRenew(stop: AbortSignal, withinMs: number): Promise<boolean> {
    const { namespace, leaseName, identity, leaseDurationMs } = this.#opts;
    const sentAt = Date.now();
    const now = microTime();
    const durationSeconds = Math.ceil(leaseDurationMs / 1000);
    const signal = AbortSignal.any([stop, AbortSignal.timeout(withinMs)]);
    try {
      const current = await this.#client.find(leases, leaseName, namespace, { signal });
      if (!current) {
        this.#lease = await this.#client.create(
          leases,
          {
            metadata: { name: leaseName, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.#observed = { record: JSON.stringify(this.#lease.spec), at: Date.now() };
        this.#renewedAt = sentAt;
        return true;
      }
      const spec = current.spec ?? {};
      const record = JSON.stringify(spec);
      if (this.#observed?.record !== record) this.#observed = { record, at: Date.now() };
      const holder = spec.holderIdentity ?? '';
      const heldByOther = holder !== '' && holder !== identity;
      const expiresAt = this.#observed.at + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (heldByOther && Date.now() < expiresAt) return false;

      const acquiring = holder !== identity;
      this.#lease = await this.#client.replace(
        leases,
        {
          ...current,
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: acquiring ? now : (spec.acquireTime ?? now),
            renewTime: now,
            // Every change of leader counts, a released Lease taken over included (as client-go counts).
            leaseTransitions: (spec.leaseTransitions ?? 0) + (acquiring ? 1 : 0),
          },
        },
        { signal },
      );
      this.#observed = { record: JSON.stringify(this.#lease.spec), at: Date.now() };
      this.#renewedAt = sentAt;
      return true;
    } catch (error) {
      if (!(error instanceof ConflictError || error instanceof AlreadyExistsError)) {
        this.#log.warn({ err: String(error) }, 'could not acquire or renew the lease');
      }
      return false;
    }
  }
}

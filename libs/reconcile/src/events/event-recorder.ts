import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import { microTime } from '../client/micro-time.ts';
import { resourceType, type KubeObject } from '../client/resource-type.ts';
import { BackgroundWrites } from './background-writes.ts';

/** An events.k8s.io/v1 Event as it travels (times as MicroTime strings). */
interface EventObject extends KubeObject {
  eventTime?: string;
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  note?: string;
  type?: string;
  regarding?: {
    apiVersion?: string;
    kind?: string;
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
  series?: { count: number; lastObservedTime: string };
}

const events = resourceType<EventObject>('events.k8s.io/v1', 'Event', 'events');

export type EventType = 'Normal' | 'Warning';

export interface RecordedEvent {
  type: EventType;
  /** CamelCase, machine-readable: `ScaledUp`, `ReconcileFailed`. */
  reason: string;
  /** What the operator did or is doing: `Scaled`, `Reconcile`. */
  action: string;
  /** A sentence for people. Never put secrets here. */
  note: string;
}

// Repeats of one event inside this window update a series on the existing Event instead of
// creating new ones (what client-go's events broadcaster does).
const seriesWindowMs = 6 * 60_000;
const maxTracked = 4096;

interface Series {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
  /** Settles once this series' last queued write has: true if the Event exists. */
  written: Promise<boolean>;
}

/** What every copy of one recorder (`withSignal`) shares: the series and the write backlog. */
interface SharedState {
  series: Map<string, Series>;
  writes: BackgroundWrites;
}

/**
 * Emits events.k8s.io/v1 Events about objects. Recording never waits for the API server: the
 * write is queued and sent in the background, a few at a time, as client-go's recorder does, so an
 * Event never holds a reconcile (or its worker) up; `flush()` waits for the queued writes. Repeated
 * identical events are aggregated into one Event with a growing `series.count`. Failures to record
 * (and events dropped from a full backlog of 1000) are logged and never thrown: an Event is a
 * courtesy, not part of the reconcile's outcome.
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #controller: string;
  readonly #instance: string;
  readonly #log: Logger;
  readonly #shared: SharedState;

  constructor(
    client: KubeClient,
    reportingController: string,
    reportingInstance: string,
    log: Logger,
    shared: SharedState = { series: new Map(), writes: new BackgroundWrites() },
  ) {
    // Events are never applied with applyIfChanged: remembering their writes would only cost memory.
    this.#client = client.withOptions({ rememberWrites: false });
    this.#controller = reportingController;
    this.#instance = reportingInstance;
    this.#log = log;
    this.#shared = shared;
  }

  /** The same recorder (same series, same backlog), whose writes stop when `signal` aborts. */
  withSignal(signal: AbortSignal): EventRecorder {
    return new EventRecorder(
      this.#client.withSignal(signal),
      this.#controller,
      this.#instance,
      this.#log,
      this.#shared,
    );
  }

  /** Events queued or being written now. */
  get pending(): number {
    return this.#shared.writes.pending;
  }

  /** Resolves true once every event recorded so far has been written (or failed), false after `timeoutMs`. */
  flush(timeoutMs = 30_000): Promise<boolean> {
    return this.#shared.writes.idle(timeoutMs);
  }

  /**
   * Records an event about `regarding`: queues its write and resolves at once, before the API
   * server has it (see `flush()`).
   */
  record(regarding: KubeObject, event: RecordedEvent): Promise<void> {
    const meta = regarding.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const key = [meta.uid, event.type, event.reason, event.action, event.note].join('\u0000');
    const now = Date.now();
    const tracked = this.#shared.series;
    const series = tracked.get(key);
    if (series && now - series.firstAt < seriesWindowMs) {
      series.count++;
      const count = series.count;
      const after = series.written;
      // After the series' previous write (its create first), so counts never go backwards.
      series.written = this.#queue(event, async () => {
        if (!(await after)) return false;
        await this.#client.patch(events, series.name, series.namespace, {
          series: { count, lastObservedTime: microTime() },
        });
        return true;
      });
      return Promise.resolve();
    }
    const name = `${meta.name ?? 'object'}.${randomBytes(8).toString('hex')}`.slice(0, 253);
    const created: Series = { name, namespace, count: 1, firstAt: now, written: Promise.resolve(false) };
    if (tracked.size >= maxTracked) tracked.delete(tracked.keys().next().value as string);
    tracked.set(key, created);
    const regardingRef: NonNullable<EventObject['regarding']> = {};
    if (regarding.apiVersion) regardingRef.apiVersion = regarding.apiVersion;
    if (regarding.kind) regardingRef.kind = regarding.kind;
    if (meta.name) regardingRef.name = meta.name;
    if (meta.namespace) regardingRef.namespace = meta.namespace;
    if (meta.uid) regardingRef.uid = meta.uid;
    if (meta.resourceVersion) regardingRef.resourceVersion = meta.resourceVersion;
    const eventTime = microTime();
    created.written = this.#queue(event, async () => {
      await this.#client.create(events, {
        metadata: { name, namespace },
        eventTime,
        reportingController: this.#controller,
        reportingInstance: this.#instance,
        action: event.action,
        reason: event.reason,
        note: event.note.slice(0, 1024),
        type: event.type,
        regarding: regardingRef,
      });
      return true;
    });
    // A series whose Event could not be created starts over with the next repeat.
    void created.written.then((ok) => {
      if (!ok && tracked.get(key) === created) tracked.delete(key);
    });
    return Promise.resolve();
  }

  // Queues one write; the promise settles when it has run (true if it wrote), never rejects.
  #queue(event: RecordedEvent, write: () => Promise<boolean>): Promise<boolean> {
    return new Promise<boolean>((settle) => {
      const queued = this.#shared.writes.add(async () => {
        try {
          settle(await write());
        } catch (error) {
          this.#log.warn({ err: String(error), reason: event.reason }, 'could not record an event');
          settle(false);
        }
      });
      if (!queued) {
        this.#log.warn(
          { reason: event.reason, dropped: this.#shared.writes.dropped },
          'event backlog full; event dropped',
        );
        settle(false);
      }
    });
  }

  /** Records a Normal event (queued; see `record`). */
  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Normal', reason, action, note });
  }

  /** Records a Warning event (queued; see `record`). */
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Warning', reason, action, note });
  }
}

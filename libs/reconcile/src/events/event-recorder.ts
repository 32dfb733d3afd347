import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import { microTime } from '../client/micro-time.ts';
import { resourceType, type KubeObject } from '../client/resource-type.ts';

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
}

/**
 * Emits events.k8s.io/v1 Events about objects. Repeated identical events are aggregated into one
 * Event with a growing `series.count`. Failures to record are logged and never thrown: an Event
 * is a courtesy, not part of the reconcile's outcome.
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #controller: string;
  readonly #instance: string;
  readonly #log: Logger;
  readonly #series: Map<string, Series>;

  constructor(
    client: KubeClient,
    reportingController: string,
    reportingInstance: string,
    log: Logger,
    series = new Map<string, Series>(),
  ) {
    this.#client = client;
    this.#controller = reportingController;
    this.#instance = reportingInstance;
    this.#log = log;
    this.#series = series;
  }

  /** The same recorder (same series), whose writes stop when `signal` aborts. */
  withSignal(signal: AbortSignal): EventRecorder {
    return new EventRecorder(
      this.#client.withSignal(signal),
      this.#controller,
      this.#instance,
      this.#log,
      this.#series,
    );
  }

  /** Records an event about `regarding`. */
  async record(regarding: KubeObject, event: RecordedEvent): Promise<void> {
    const meta = regarding.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const key = [meta.uid, event.type, event.reason, event.action, event.note].join('\u0000');
    const now = Date.now();
    const series = this.#series.get(key);
    try {
      if (series && now - series.firstAt < seriesWindowMs) {
        series.count++;
        await this.#client.patch(events, series.name, series.namespace, {
          series: { count: series.count, lastObservedTime: microTime() },
        });
        return;
      }
      const name = `${meta.name ?? 'object'}.${randomBytes(8).toString('hex')}`.slice(0, 253);
      await this.#client.create(events, {
        metadata: { name, namespace },
        eventTime: microTime(),
        reportingController: this.#controller,
        reportingInstance: this.#instance,
        action: event.action,
        reason: event.reason,
        note: event.note.slice(0, 1024),
        type: event.type,
        regarding: JSON.parse(
          JSON.stringify({
            apiVersion: regarding.apiVersion,
            kind: regarding.kind,
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resourceVersion: meta.resourceVersion,
          }),
        ) as NonNullable<EventObject['regarding']>,
      });
      if (this.#series.size >= maxTracked) this.#series.delete(this.#series.keys().next().value as string);
      this.#series.set(key, { name, namespace, count: 1, firstAt: now });
    } catch (error) {
      this.#series.delete(key);
      this.#log.warn({ err: String(error), reason: event.reason }, 'could not record an event');
    }
  }

  /** Records a Normal event. */
  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Normal', reason, action, note });
  }

  /** Records a Warning event. */
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Warning', reason, action, note });
  }
}

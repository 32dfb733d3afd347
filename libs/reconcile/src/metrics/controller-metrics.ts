import { Counter, Gauge, Histogram, Registry } from './prometheus.ts';
import { registerProcessMetrics } from './process-metrics.ts';
import type { QueueObserver } from '../queue/work-queue.ts';

// Buckets as controller-runtime uses them, so existing dashboards and alerts read these as-is.
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const queueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * The operator's Prometheus metrics under the names controller-runtime uses
 * (`controller_runtime_*`, `workqueue_*`, `rest_client_*`, `leader_election_master_status`), in a
 * dedicated registry, plus process_* and nodejs_* process metrics. Label sets are bounded: controller
 * names and HTTP verbs/codes only.
 */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'],
    buckets: reconcileBuckets,
    registers: [this.registry],
  });
  readonly maxConcurrent = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'],
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'],
    registers: [this.registry],
  });
  readonly queueLatency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'],
    buckets: queueBuckets,
    registers: [this.registry],
  });
  readonly workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'],
    buckets: queueBuckets,
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'],
    registers: [this.registry],
  });
  readonly restRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code and method',
    labelNames: ['code', 'method'],
    registers: [this.registry],
  });
  readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
    labelNames: ['name'],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) registerProcessMetrics(this.registry);
  }

  /** A queue observer that feeds the workqueue_* metrics for the queue `name`. */
  queueObserver(name: string): QueueObserver {
    return {
      add: () => this.queueAdds.inc({ name }),
      depth: (depth) => this.queueDepth.set({ name }, depth),
      got: (seconds) => this.queueLatency.observe({ name }, seconds),
      done: (seconds) => this.workDuration.observe({ name }, seconds),
      retry: () => this.retries.inc({ name }),
    };
  }
}

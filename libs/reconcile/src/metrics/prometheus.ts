// Counters, gauges and histograms in Prometheus' text exposition format (version 0.0.4), in the
// shape of prom-client's API the library used before. prom-client was the largest single memory
// cost of an operator: importing it loads node:cluster, node:zlib and node:http/https for its
// push gateway, and its default metrics start perf_hooks monitors; about 10 MB of resident memory
// in a bundled operator (libs/reconcile/README.md, "Where the memory goes"). This is the part an
// operator uses: a few metric families with bounded label sets, rendered when scraped.

/** Label values of one series, by label name. */
export type Labels = Readonly<Record<string, string | number>>;

/** One sample as `get()` reports it (prom-client's shape, so tests read it alike). */
export interface MetricValue {
  labels: Record<string, string>;
  value: number;
  /** For histograms: `<name>_bucket`, `<name>_sum` or `<name>_count`. */
  metricName?: string;
}

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSnapshot {
  name: string;
  help: string;
  type: MetricType;
  values: MetricValue[];
}

export interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** Registries this metric is added to at once. */
  registers?: readonly Registry[];
  /**
   * Runs before every scrape, to set values that are read rather than counted. Called with the
   * metric as `this`, as prom-client does, so a `collect() { this.set(…) }` method works.
   */
  collect?: (this: Metric) => void;
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export abstract class Metric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: MetricType;
  protected readonly labelNames: readonly string[];
  readonly #collect: ((this: Metric) => void) | undefined;

  constructor(options: MetricOptions) {
    if (!metricName.test(options.name)) throw new Error(`invalid metric name '${options.name}'`);
    for (const label of options.labelNames ?? []) {
      if (!labelName.test(label) || label === 'le') {
        throw new Error(`metric ${options.name}: invalid label name '${label}'`);
      }
    }
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.#collect = options.collect;
    for (const registry of options.registers ?? []) registry.register(this);
  }

  /** The metric's current samples. */
  get(): Promise<MetricSnapshot> {
    this.#collect?.call(this);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: this.values() });
  }

  /** The metric family in text exposition format, ending with a newline. */
  expose(): string {
    this.#collect?.call(this);
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    for (const sample of this.values()) {
      lines.push(
        `${sample.metricName ?? this.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`,
      );
    }
    return `${lines.join('\n')}\n`;
  }

  protected abstract values(): MetricValue[];

  /** Drops the series of `labels` (e.g. of an object that no longer exists), so it is no longer served. */
  remove(labels: Labels): void {
    this.series().delete(this.keyOf(labels));
  }

  /** The series by key: what `remove` deletes from. */
  protected abstract series(): Map<string, unknown>;

  /** The series key of `labels`, refusing label names this metric does not have. */
  protected keyOf(labels: Labels | undefined): string {
    for (const name of Object.keys(labels ?? {})) {
      if (!this.labelNames.includes(name)) {
        throw new Error(`metric ${this.name} has no label '${name}' (labels: ${this.labelNames.join(', ')})`);
      }
    }
    return JSON.stringify(this.labelNames.map((name) => String(labels?.[name] ?? '')));
  }

  protected labelsOf(key: string): Record<string, string> {
    const values = JSON.parse(key) as string[];
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => {
      const value = values[i];
      if (value) labels[name] = value;
    });
    return labels;
  }
}

/** A value that only goes up (resets when the process restarts). */
export class Counter extends Metric {
  readonly type = 'counter';
  readonly #series = new Map<string, number>();

  protected series(): Map<string, unknown> {
    return this.#series;
  }

  inc(labels?: Labels, value = 1): void {
    if (!(value >= 0)) throw new Error(`metric ${this.name}: a counter cannot decrease (inc by ${value})`);
    const key = this.keyOf(labels);
    this.#series.set(key, (this.#series.get(key) ?? 0) + value);
  }

  protected values(): MetricValue[] {
    return [...this.#series].map(([key, value]) => ({ labels: this.labelsOf(key), value }));
  }
}

/** A value that goes up and down. */
export class Gauge extends Metric {
  readonly type = 'gauge';
  readonly #series = new Map<string, number>();

  protected series(): Map<string, unknown> {
    return this.#series;
  }

  set(labels: Labels, value: number): void {
    this.#series.set(this.keyOf(labels), value);
  }

  inc(labels?: Labels, value = 1): void {
    const key = this.keyOf(labels);
    this.#series.set(key, (this.#series.get(key) ?? 0) + value);
  }

  dec(labels?: Labels, value = 1): void {
    this.inc(labels, -value);
  }

  protected values(): MetricValue[] {
    return [...this.#series].map(([key, value]) => ({ labels: this.labelsOf(key), value }));
  }
}

interface HistogramSeries {
  /** Observations at or below each bucket's upper bound (not yet cumulative). */
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into buckets by upper bound, with their sum and count. */
export class Histogram extends Metric {
  readonly type = 'histogram';
  readonly #buckets: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  protected series(): Map<string, unknown> {
    return this.#series;
  }

  constructor(options: MetricOptions & { buckets: readonly number[] }) {
    super(options);
    this.#buckets = [...options.buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = this.keyOf(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const bucket = this.#buckets.findIndex((bound) => value <= bound);
    if (bucket >= 0) series.counts[bucket] = (series.counts[bucket] ?? 0) + 1;
    series.sum += value;
    series.count += 1;
  }

  /** Starts timing; the returned function observes the seconds elapsed and returns them. */
  startTimer(labels: Labels): () => number {
    const started = performance.now();
    return () => {
      const seconds = (performance.now() - started) / 1000;
      this.observe(labels, seconds);
      return seconds;
    };
  }

  protected values(): MetricValue[] {
    const values: MetricValue[] = [];
    for (const [key, series] of this.#series) {
      const labels = this.labelsOf(key);
      let cumulative = 0;
      this.#buckets.forEach((bound, i) => {
        cumulative += series.counts[i] ?? 0;
        values.push({
          labels: { ...labels, le: String(bound) },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({
        labels: { ...labels, le: '+Inf' },
        value: series.count,
        metricName: `${this.name}_bucket`,
      });
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return values;
  }
}

export type AnyMetric = Counter | Gauge | Histogram;

/** The metrics one /metrics endpoint serves, in the order they were registered. */
export class Registry {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly #metrics = new Map<string, AnyMetric>();

  register(metric: Metric): void {
    if (this.#metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.#metrics.set(metric.name, metric as AnyMetric);
  }

  getSingleMetric(name: string): AnyMetric | undefined {
    return this.#metrics.get(name);
  }

  getSingleMetricAsString(name: string): Promise<string> {
    return Promise.resolve(this.#metrics.get(name)?.expose() ?? '');
  }

  /** Every metric in text exposition format. */
  metrics(): Promise<string> {
    return Promise.resolve([...this.#metrics.values()].map((metric) => metric.expose()).join('\n'));
  }
}

function escapeHelp(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
}

function formatLabels(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(
    ([name, value]) =>
      `${name}="${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`,
  );
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

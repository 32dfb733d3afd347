import { describe, expect, it } from 'vitest';
import { ControllerMetrics } from './controller-metrics.ts';
import { Counter, Gauge, Histogram, Registry } from './prometheus.ts';

describe('Prometheus text exposition', () => {
  it('renders counters and gauges with HELP, TYPE and one line per label set', async () => {
    const registry = new Registry();
    const requests = new Counter({
      name: 'requests_total',
      help: 'Requests.\nBy code.',
      labelNames: ['code', 'method'],
      registers: [registry],
    });
    const depth = new Gauge({ name: 'depth', help: 'Depth', labelNames: ['name'], registers: [registry] });
    requests.inc({ code: '200', method: 'GET' });
    requests.inc({ code: '200', method: 'GET' }, 2);
    requests.inc({ method: 'PATCH', code: 409 });
    depth.set({ name: 'say "hi"\\now' }, 3);
    depth.dec({ name: 'say "hi"\\now' });

    expect(await registry.metrics()).toBe(
      [
        '# HELP requests_total Requests.\\nBy code.',
        '# TYPE requests_total counter',
        'requests_total{code="200",method="GET"} 3',
        'requests_total{code="409",method="PATCH"} 1',
        '',
        '# HELP depth Depth',
        '# TYPE depth gauge',
        'depth{name="say \\"hi\\"\\\\now"} 2',
        '',
      ].join('\n'),
    );
    expect(registry.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('drops the series of removed labels, and reads collected values at each scrape', async () => {
    const registry = new Registry();
    let scrapes = 0;
    const members = new Gauge({
      name: 'members',
      help: 'Members',
      labelNames: ['cluster'],
      registers: [registry],
      collect() {
        scrapes += 1;
        expect(this).toBe(members); // prom-client's convention: the metric is `this`
      },
    });
    const changes = new Counter({ name: 'changes_total', help: 'Changes', labelNames: ['cluster'] });
    members.set({ cluster: 'a' }, 3);
    members.set({ cluster: 'b' }, 5);
    changes.inc({ cluster: 'a' });
    members.remove({ cluster: 'a' });
    changes.remove({ cluster: 'a' });
    expect((await members.get()).values).toEqual([{ labels: { cluster: 'b' }, value: 5 }]);
    expect((await changes.get()).values).toEqual([]);
    expect(await registry.metrics()).not.toContain('cluster="a"');
    expect(scrapes).toBe(2);
  });

  it('renders histograms with cumulative buckets, +Inf, sum and count', async () => {
    const registry = new Registry();
    const latency = new Histogram({
      name: 'latency_seconds',
      help: 'Latency',
      labelNames: ['controller'],
      buckets: [1, 0.1],
      registers: [registry],
    });
    for (const seconds of [0.05, 0.5, 0.7, 3]) latency.observe({ controller: 'widget' }, seconds);

    expect(await registry.getSingleMetricAsString('latency_seconds')).toBe(
      [
        '# HELP latency_seconds Latency',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{controller="widget",le="0.1"} 1',
        'latency_seconds_bucket{controller="widget",le="1"} 3',
        'latency_seconds_bucket{controller="widget",le="+Inf"} 4',
        'latency_seconds_sum{controller="widget"} 4.25',
        'latency_seconds_count{controller="widget"} 4',
        '',
      ].join('\n'),
    );
    const end = latency.startTimer({ controller: 'other' });
    expect(end()).toBeGreaterThanOrEqual(0);
    const snapshot = await latency.get();
    expect(snapshot.values.filter((v) => v.metricName === 'latency_seconds_count')).toEqual([
      { labels: { controller: 'widget' }, value: 4, metricName: 'latency_seconds_count' },
      { labels: { controller: 'other' }, value: 1, metricName: 'latency_seconds_count' },
    ]);
  });

  it('refuses what Prometheus would reject or misread', () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'a_total', help: 'a', labelNames: ['x'], registers: [registry] });
    expect(() => counter.inc({ y: '1' })).toThrow("metric a_total has no label 'y' (labels: x)");
    expect(() => counter.inc({ x: '1' }, -1)).toThrow('a counter cannot decrease');
    expect(() => new Counter({ name: 'a_total', help: 'again', registers: [registry] })).toThrow(
      'metric a_total is already registered',
    );
    expect(() => new Gauge({ name: 'bad-name', help: 'b' })).toThrow("invalid metric name 'bad-name'");
    expect(() => new Histogram({ name: 'h', help: 'h', labelNames: ['le'], buckets: [1] })).toThrow(
      "invalid label name 'le'",
    );
  });

  it("serves controller-runtime's names and process metrics read at scrape time", async () => {
    const metrics = new ControllerMetrics();
    metrics.restRequests.inc({ method: 'GET', code: '200' });
    const requests = await metrics.registry.getSingleMetric('rest_client_requests_total')?.get();
    expect(requests?.values).toEqual([{ labels: { code: '200', method: 'GET' }, value: 1 }]);

    const text = await metrics.registry.metrics();
    for (const name of [
      'controller_runtime_reconcile_total',
      'workqueue_depth',
      'leader_election_master_status',
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    const resident = /^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1];
    expect(Number(resident)).toBeGreaterThan(10 * 2 ** 20);
    const cpu = (body: string) => Number(/^process_cpu_seconds_total (\S+)$/m.exec(body)?.[1]);
    const before = cpu(text);
    for (let spin = Date.now(); Date.now() - spin < 20;);
    expect(cpu(await metrics.registry.metrics())).toBeGreaterThan(before);
  });
});

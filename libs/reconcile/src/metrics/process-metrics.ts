// The process metrics Prometheus' own clients export under the same names (Go's process collector,
// prom-client's defaults), read when scraped: nothing runs between scrapes (no event-loop monitor,
// no GC observer), so they cost an idle operator nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { Counter, Gauge, type Registry } from './prometheus.ts';

const startTimeSeconds = Math.round(Date.now() / 1000 - process.uptime());

/** Registers process_* and nodejs_* metrics on `registry`. */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  // A counter only goes up: each scrape adds what was used since the one before.
  const cumulative = (name: string, help: string, read: () => number) => {
    let seen = 0;
    const counter: Counter = new Counter({
      name,
      help,
      registers,
      collect: () => {
        const total = read();
        if (total > seen) counter.inc(undefined, total - seen);
        seen = Math.max(seen, total);
      },
    });
  };
  cumulative(
    'process_cpu_user_seconds_total',
    'Total user CPU time spent in seconds.',
    () => process.cpuUsage().user / 1e6,
  );
  cumulative(
    'process_cpu_system_seconds_total',
    'Total system CPU time spent in seconds.',
    () => process.cpuUsage().system / 1e6,
  );
  cumulative('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  });
  const startTime: Gauge = new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers,
    collect: () => startTime.set({}, startTimeSeconds),
  });
  const resident: Gauge = new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers,
    collect: () => resident.set({}, process.memoryUsage.rss()),
  });
  const openFds: Gauge = new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers,
    collect: () => {
      const count = linuxOnly(() => readdirSync('/proc/self/fd').length);
      if (count !== undefined) openFds.set({}, count);
    },
  });
  const maxFds: Gauge = new Gauge({
    name: 'process_max_fds',
    help: 'Maximum number of open file descriptors.',
    registers,
    collect: () => {
      const limits = linuxOnly(() => readFileSync('/proc/self/limits', 'utf8'));
      const max = /Max open files\s+(\d+)/.exec(limits ?? '')?.[1];
      if (max) maxFds.set({}, Number(max));
    },
  });
  const memory = (name: string, help: string, read: (usage: NodeJS.MemoryUsage) => number) => {
    const gauge: Gauge = new Gauge({
      name,
      help,
      registers,
      collect: () => gauge.set({}, read(process.memoryUsage())),
    });
  };
  memory('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', (m) => m.heapUsed);
  memory('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', (m) => m.heapTotal);
  memory('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', (m) => m.external);
  const [major, minor, patch] = process.versions.node.split('.');
  new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'],
    registers,
  }).set({ version: process.version, major: major ?? '', minor: minor ?? '', patch: patch ?? '' }, 1);
}

function linuxOnly<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined; // no /proc (not Linux): the metric is left out
  }
}

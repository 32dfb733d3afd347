// npm run bench:memcached-exporter -- [--seconds S] [--burst N]
// What the metrics sidecar costs each memcached pod (ADR 0402): the project's Go exporter
// (operators/memcached/exporter) beside the cheapest Node alternative, a dozen lines of plain
// JavaScript that keep one connection, ask `stats` and write every numeric field as a series, with
// no HELP or TYPE lines, no names mapped and no labels (the least any Node exporter does), run once
// with plain `node` and once with the operator image's low-memory flags. Each runs alone against the same
// real memcached holding 1000 items:
//   paced: one scrape a second for S seconds (default 60; 5 under BENCH_SMOKE=1), Prometheus's
//          pace at a 1 s interval: CPU per scrape, resident memory at the end and at its peak;
//   burst: N scrapes back to back (default 2000; 200 under BENCH_SMOKE=1): CPU per scrape with
//          the CPU clock's 10 ms ticks spread over many scrapes.
// CPU is the exporter process's own (utime + stime from /proc), not wall-clock time, so other
// jobs on the machine move it little. One JSON line last; it asserts nothing about time.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freeLoopbackPort, startProcess, waitUntil, type ManagedProcess } from '@homeostat/testing';
import {
  memcachedExporterBinary,
  scrape,
  startMemcachedExporter,
} from '../../operators/memcached/exporter/exporter-process.ts';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { Teardown } from '../support/teardown.ts';
import { memcachedServer, textSession } from './memcached-process.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: sized('60', '5') },
    burst: { type: 'string', default: sized('2000', '200') },
  },
});
const pacedSeconds = Number(values.seconds);
const burstScrapes = Number(values.burst);
const say = (line: string) => console.error(`bench:memcached-exporter ${line}`);
const ticksPerSecond = 100; // USER_HZ

// The Node alternative, plain JavaScript so that no TypeScript loader (which needs WebAssembly,
// off under --jitless) is part of what is measured.
const nodeExporterSource = `
import { createServer } from 'node:http';
import { connect } from 'node:net';
const [host, port] = process.env.MEMCACHED.split(':');
let socket, pending = Promise.resolve();
function stats() {
  return new Promise((resolve, reject) => {
    if (!socket) { socket = connect({ host, port: Number(port) }); socket.setEncoding('utf8'); socket.on('error', () => {}); }
    let text = '';
    const drop = (error) => { socket.destroy(); socket = undefined; reject(error); };
    const onData = (chunk) => {
      text += chunk;
      if (!text.endsWith('END\\r\\n')) return;
      socket.off('data', onData); socket.off('close', drop);
      resolve(text);
    };
    socket.on('data', onData); socket.once('close', drop);
    socket.write('stats\\r\\n');
  });
}
createServer((request, response) => {
  // One connection: scrapes take turns on it.
  pending = pending.then(() => stats()).then((text) => {
    let out = 'memcached_up 1\\n';
    for (const line of text.split('\\r\\n')) {
      const [stat, name, value] = line.split(' ');
      if (stat === 'STAT' && value !== '' && !Number.isNaN(Number(value))) out += 'memcached_' + name + ' ' + value + '\\n';
    }
    response.end(out);
  }, () => response.end('memcached_up 0\\n'));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;
// The operator image's flags (operators/Dockerfile, ADR 0601): the least memory Node runs in here.
const lowMemoryFlags = ['--max-semi-space-size=1', '--jitless', '--optimize-for-size'];

interface Implementation {
  name: string;
  start(memcachedAddress: string, logDir: string): Promise<{ process: ManagedProcess; metricsUrl: string }>;
}

function nodeImplementation(name: string, flags: readonly string[]): Implementation {
  return {
    name,
    async start(memcachedAddress, logDir) {
      const port = await freeLoopbackPort();
      const started = startProcess({
        name,
        command: process.execPath,
        args: [...flags, '--input-type=module', '--eval', nodeExporterSource],
        env: { ...process.env, MEMCACHED: memcachedAddress, PORT: String(port) },
        logFile: join(logDir, `${name}.log`),
      });
      const metricsUrl = `http://127.0.0.1:${port}/metrics`;
      const exited = started.exited.then((how) => `${name} exited (${String(how)})`);
      await waitUntil(
        `${name} on port ${port}`,
        () =>
          scrape(metricsUrl).then(
            () => true,
            () => false,
          ),
        {
          timeoutMs: 10_000,
          intervalMs: 20,
          abort: exited,
        },
      );
      return { process: started, metricsUrl };
    },
  };
}

function cpuSeconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Resident and peak resident memory in MB, from /proc/<pid>/status. */
function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

interface Figures {
  exporter: string;
  series_per_scrape: number;
  paced_scrapes: number;
  paced_cpu_ms_per_scrape: number;
  rss_mb: number;
  peak_rss_mb: number;
  burst_scrapes: number;
  burst_cpu_ms_per_scrape: number;
  rss_mb_after_burst: number;
}

const round = (x: number, digits = 2) => Number(x.toFixed(digits));

async function measure(
  implementation: Implementation,
  memcachedAddress: string,
  logDir: string,
): Promise<Figures> {
  const running = await implementation.start(memcachedAddress, logDir);
  try {
    const pid = running.process.pid;
    // A few scrapes first, so that start-up work is not counted as scraping.
    let series = 0;
    for (let i = 0; i < 5; i++) series = (await scrape(running.metricsUrl)).size;
    if ((await scrape(running.metricsUrl)).get('memcached_up') !== 1)
      throw new Error(`${implementation.name} does not reach memcached`);
    const pacedStart = cpuSeconds(pid);
    for (let i = 0; i < pacedSeconds; i++) {
      const next = sleep(1000);
      await scrape(running.metricsUrl);
      await next;
    }
    const pacedCpu = cpuSeconds(pid) - pacedStart;
    const paced = memoryMb(pid);
    const burstStart = cpuSeconds(pid);
    for (let i = 0; i < burstScrapes; i++) await scrape(running.metricsUrl);
    const burstCpu = cpuSeconds(pid) - burstStart;
    return {
      exporter: implementation.name,
      series_per_scrape: series,
      paced_scrapes: pacedSeconds,
      paced_cpu_ms_per_scrape: round((pacedCpu * 1000) / pacedSeconds),
      rss_mb: round(paced.rss, 1),
      peak_rss_mb: round(paced.peak, 1),
      burst_scrapes: burstScrapes,
      burst_cpu_ms_per_scrape: round((burstCpu * 1000) / burstScrapes, 3),
      rss_mb_after_burst: round(memoryMb(pid).rss, 1),
    };
  } finally {
    await running.process.stop();
  }
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:memcached-exporter');
try {
  const logDir = await mkdtemp(join(tmpdir(), 'homeostat-bench-memcached-exporter-'));
  teardown.add('remove the logs', () => rm(logDir, { recursive: true, force: true }));
  const memcached = await memcachedServer({ name: 'memcached-0', logDir });
  teardown.add('stop memcached', () => memcached.stop());
  await memcached.start();
  let items = '';
  for (let i = 0; i < 1000; i++) items += `set item-${i} 0 0 100\r\n${'v'.repeat(100)}\r\n`;
  await textSession(memcached.address, items);

  const binary = await memcachedExporterBinary();
  const implementations: Implementation[] = [
    {
      name: 'go',
      start: (memcachedAddress, dir) => startMemcachedExporter({ binary, memcachedAddress, logDir: dir }),
    },
    nodeImplementation('node', []),
    nodeImplementation('node-low-memory', lowMemoryFlags),
  ];
  say(
    `${pacedSeconds} s at one scrape a second, then ${burstScrapes} back to back; load average ${loadAverage()}`,
  );
  const results: Figures[] = [];
  for (const implementation of implementations) {
    const figures = await measure(implementation, memcached.address, logDir);
    say(
      `${figures.exporter.padEnd(16)} RSS ${figures.rss_mb} MB (peak ${figures.peak_rss_mb} MB, after burst ` +
        `${figures.rss_mb_after_burst} MB), CPU ${figures.paced_cpu_ms_per_scrape} ms/scrape paced, ` +
        `${figures.burst_cpu_ms_per_scrape} ms/scrape in a burst, ${figures.series_per_scrape} series`,
    );
    results.push(figures);
  }
  const [go, ...nodes] = results;
  for (const node of nodes) {
    if (!go) break;
    say(
      `${node.exporter} / go: RSS ${round(node.rss_mb / go.rss_mb, 1)}x, ` +
        `burst CPU per scrape ${go.burst_cpu_ms_per_scrape > 0 ? round(node.burst_cpu_ms_per_scrape / go.burst_cpu_ms_per_scrape, 1) : 'n/a'}x`,
    );
  }
  say(`load average ${loadAverage()}`);
  process.stdout.write(
    `${JSON.stringify({ bench: 'memcached-exporter', load_average: loadAverage(), results })}\n`,
  );
} finally {
  await teardown.run();
}

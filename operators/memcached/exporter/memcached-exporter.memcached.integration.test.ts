// The real memcached-exporter binary against a real memcached process on loopback: the counters a
// dashboard reads move with the commands clients send, the exporter keeps to one connection, and a
// memcached that is down is reported as `memcached_up 0` in a scrape that still succeeds. Then
// against a memcached started as a pod with spec.tls and spec.sasl starts it: the sidecar reads
// the loopback plaintext listener and authenticates with the Secret's files.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort, type ManagedProcess } from '@homeostat/testing';
import type { MemcachedSpecFields } from '../src/api/memcached-types.ts';
import { exporterSaslArgs, statsAddress, type PodLayout } from '../src/controllers/memcached-command.ts';
import { defaultedSpec } from '../src/test-support/memcached-fixtures.ts';
import { preparePodFiles, startPodMemcached } from '../src/test-support/pod-memcached.ts';
import {
  memcachedServer,
  textSession,
  type MemcachedServer,
} from '../../../bench/memcached/memcached-process.ts';
import {
  memcachedExporterBinary,
  scrape,
  startMemcachedExporter,
  type RunningExporter,
} from './exporter-process.ts';

const memoryMb = 4;

const value = (series: Map<string, number>, name: string): number => {
  const found = series.get(name);
  if (found === undefined) throw new Error(`no series ${name} in the scrape`);
  return found;
};
const commands = (cmd: string, status: string) =>
  `memcached_commands_total{command="${cmd}",status="${status}"}`;

describe('memcached-exporter against a real memcached', () => {
  let logDir: string;
  let memcached: MemcachedServer;
  let exporter: RunningExporter;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-exporter-'));
    memcached = await memcachedServer({ name: 'memcached-0', logDir, memoryMb });
    await memcached.start();
    exporter = await startMemcachedExporter({
      binary: await memcachedExporterBinary(),
      memcachedAddress: memcached.address,
      logDir,
    });
  }, 11 * 60_000);

  afterAll(async () => {
    await exporter?.process.stop();
    await memcached?.stop();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('moves hits, misses, sets, deletes, items and bytes with what clients do', async () => {
    const before = await scrape(exporter.metricsUrl);
    expect(value(before, 'memcached_up')).toBe(1);
    expect(value(before, 'memcached_limit_bytes')).toBe(memoryMb * 1024 * 1024);
    expect(value(before, 'memcached_uptime_seconds')).toBeGreaterThanOrEqual(0);
    expect([...before.keys()].some((s) => s.startsWith('memcached_version{version="1.6.'))).toBe(true);

    await textSession(
      memcached.address,
      'set kept 0 0 5\r\nhello\r\nset dropped 0 0 3\r\nbye\r\n' +
        'get kept\r\nget kept\r\nget absent\r\nget also-absent\r\nget nothing\r\n' +
        'delete dropped\r\ndelete never-set\r\n',
    );
    const after = await scrape(exporter.metricsUrl);
    const moved = (series: string) => value(after, series) - value(before, series);
    expect(moved(commands('set', 'hit'))).toBe(2);
    expect(moved(commands('get', 'hit'))).toBe(2);
    expect(moved(commands('get', 'miss'))).toBe(3);
    expect(moved(commands('delete', 'hit'))).toBe(1);
    expect(moved(commands('delete', 'miss'))).toBe(1);
    expect(value(after, 'memcached_current_items')).toBe(1);
    expect(value(after, 'memcached_current_bytes')).toBeGreaterThan(0);
    expect(moved('memcached_items_total')).toBe(2);
    expect(moved('memcached_read_bytes_total')).toBeGreaterThan(0);
    // The session's own connection, closed again since: accepted once.
    expect(moved('memcached_connections_total')).toBe(1);
    expect(value(after, 'memcached_current_connections')).toBeGreaterThanOrEqual(1);
  });

  it('counts evictions once the items outgrow the memory limit', async () => {
    const before = await scrape(exporter.metricsUrl);
    // 100 values of 100 KB into a 4 MB cache: most of them push older ones out.
    const big = 'x'.repeat(100 * 1024);
    let batch = '';
    for (let i = 0; i < 100; i++) batch += `set big-${i} 0 0 ${big.length}\r\n${big}\r\n`;
    await textSession(memcached.address, batch);
    const after = await scrape(exporter.metricsUrl);
    expect(value(after, 'memcached_items_evicted_total')).toBeGreaterThan(
      value(before, 'memcached_items_evicted_total'),
    );
    expect(value(after, 'memcached_current_bytes')).toBeLessThanOrEqual(
      value(after, 'memcached_limit_bytes'),
    );
  });

  it('serves every scrape, concurrent ones included, over one kept connection', async () => {
    const first = await scrape(exporter.metricsUrl);
    await Promise.all(Array.from({ length: 10 }, () => scrape(exporter.metricsUrl)));
    for (let i = 0; i < 10; i++) await scrape(exporter.metricsUrl);
    const last = await scrape(exporter.metricsUrl);
    expect(value(last, 'memcached_connections_total')).toBe(value(first, 'memcached_connections_total'));
  });

  it('answers memcached_up 0 while memcached is down, and 1 again once it is back', async () => {
    await memcached.stop();
    const down = await scrape(exporter.metricsUrl);
    expect(value(down, 'memcached_up')).toBe(0);
    expect(down.has(commands('get', 'hit'))).toBe(false);
    // The broken connection is dropped, not retried forever: a second scrape says the same.
    expect(value(await scrape(exporter.metricsUrl), 'memcached_up')).toBe(0);

    await memcached.start();
    const back = await scrape(exporter.metricsUrl);
    expect(value(back, 'memcached_up')).toBe(1);
    // A restarted memcached starts empty: the exporter reports the new process's counters.
    expect(value(back, commands('get', 'hit'))).toBe(0);
  });
});

describe('memcached-exporter against a real memcached run with the pod’s -Z and -S arguments', () => {
  const username = 'shop';
  const password = 'sidecar sees this only in a file';
  let dir: string;
  let layout: PodLayout;
  let spec: MemcachedSpecFields;
  let memcached: ManagedProcess;
  let exporter: RunningExporter;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-exporter-secured-'));
    ({ layout } = await preparePodFiles(dir, { username, password }));
    spec = defaultedSpec({
      port: await freeLoopbackPort(),
      memoryLimitMB: memoryMb,
      tls: { secretName: 'cache-tls' },
      sasl: { secretName: 'cache-sasl' },
    });
    memcached = await startPodMemcached(spec, layout, dir, true);
    exporter = await startMemcachedExporter({
      binary: await memcachedExporterBinary(),
      memcachedAddress: statsAddress(spec, layout),
      extraArgs: exporterSaslArgs(spec, layout),
      logDir: dir,
    });
  }, 11 * 60_000);

  afterAll(async () => {
    await exporter?.process.stop();
    await memcached?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the statistics over the loopback listener, authenticated (binary protocol, SASL PLAIN)', async () => {
    const series = await scrape(exporter.metricsUrl);
    expect(value(series, 'memcached_up')).toBe(1);
    expect(value(series, 'memcached_limit_bytes')).toBe(memoryMb * 1024 * 1024);
    expect([...series.keys()].some((s) => s.startsWith('memcached_version{version="1.6.'))).toBe(true);
    expect(value(series, commands('get', 'miss'))).toBe(0);
  });

  it('keeps authenticating after the Secret rotates and memcached restarts in the same pod', async () => {
    // The kubelet rewrites the mounted Secret within a minute of a rotation; memcached keeps the
    // database the init container built until the pod rolls (a container restart does not rerun
    // it), so the sidecar must keep logging in with what that database was built from.
    writeFileSync(join(layout.saslCredentialsDir, 'password'), 'the rotated password');
    await memcached.stop();
    memcached = await startPodMemcached(spec, layout, dir, true);
    expect(value(await scrape(exporter.metricsUrl), 'memcached_up')).toBe(1);
    writeFileSync(join(layout.saslCredentialsDir, 'password'), password);
  });

  it('answers memcached_up 0 with a wrong password, never logging it, and recovers once the file is right', async () => {
    // The sidecar's file: the init container's copy of the Secret (exporterSaslArgs).
    const passwordFile = join(layout.saslDir, 'password');
    // The kept connection stays authenticated: a new memcached makes the exporter log in again.
    await memcached.stop();
    writeFileSync(passwordFile, 'not the password');
    memcached = await startPodMemcached(spec, layout, dir, true);
    expect(value(await scrape(exporter.metricsUrl), 'memcached_up')).toBe(0);
    const log = readFileSync(exporter.process.logFile, 'utf8');
    expect(log).toContain('memcached refused SASL authentication as "shop"');
    expect(log).not.toContain('not the password');
    expect(log).not.toContain(password);

    // Read at each connection: a corrected file is picked up without restarting the sidecar.
    writeFileSync(passwordFile, `${password}\n`);
    expect(value(await scrape(exporter.metricsUrl), 'memcached_up')).toBe(1);
  });
});

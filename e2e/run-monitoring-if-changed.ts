// `npm run e2e:monitoring-if-changed [-- --force]`: the opt-in monitoring suite, run only when
// what it checks changed since it last passed on this machine. It costs about eight minutes,
// mostly the real `for` of the alerts it fires (ADR 0016), too much for every CI run and too
// little checked if never run: CI runs it once per fingerprint of the rules, ServiceMonitors,
// dashboards, suite and addon (e2e/monitoring-fingerprint.ts). A pass leaves a marker named by
// that fingerprint in the cache folder outside the repository; with the marker there, the suite
// is skipped. `--force` runs it anyway, and a forced run that fails removes the marker. The run
// is `npm run e2e -- monitoring`, so it goes to the cluster that command picks (the local cluster
// unless KUBECONFIG is set).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cacheDir, repoRoot } from '@homeostat/testing';
import { seconds } from './cluster/progress.ts';
import { monitoringFingerprint } from './monitoring-fingerprint.ts';

/** What a marker holds: when the suite passed, how long it took, on which cluster and which files. */
interface PassedRun {
  passedAt: string;
  seconds: number;
  cluster: string;
  files: string[];
}

const { values } = parseArgs({ options: { force: { type: 'boolean', default: false } } });
const { fingerprint, files } = monitoringFingerprint(repoRoot);
const short = fingerprint.slice(0, 12);
const markers = join(cacheDir(), 'monitoring-passed');
const marker = join(markers, fingerprint);

if (existsSync(marker) && !values.force) {
  const passed = JSON.parse(readFileSync(marker, 'utf8')) as PassedRun;
  console.error(`monitoring suite: passed before for rules ${short} on this machine, skipped`);
  console.error(`  (${passed.passedAt}, ${passed.seconds} s on ${passed.cluster}; marker ${marker})`);
} else {
  const why = values.force ? '--force given' : 'not passed on this machine yet';
  console.error(`monitoring suite: rules ${short} ${why}; running npm run e2e -- monitoring`);
  const started = Date.now();
  const run = spawn('npm', ['run', 'e2e', '--', 'monitoring'], { cwd: repoRoot, stdio: 'inherit' });
  const code = await new Promise<number>((resolve) => run.once('exit', (c) => resolve(c ?? 1)));
  const took = Number(seconds(started));
  if (code === 0) {
    const passed: PassedRun = {
      passedAt: new Date().toISOString(),
      seconds: took,
      cluster: process.env['KUBECONFIG'] ?? 'the local cluster',
      files,
    };
    mkdirSync(markers, { recursive: true });
    // Written whole or not at all: a run cut short never leaves a marker that skips the next one.
    writeFileSync(`${marker}.partial`, `${JSON.stringify(passed, null, 2)}\n`);
    renameSync(`${marker}.partial`, marker);
    console.error(`monitoring suite: passed for rules ${short} in ${took} s; marker ${marker}`);
  } else {
    // A forced run that fails takes back an earlier pass: the marker claims the suite passes here.
    const hadMarker = existsSync(marker);
    rmSync(marker, { force: true });
    console.error(
      `monitoring suite: failed for rules ${short} (exit ${code}) after ${took} s; ${hadMarker ? 'earlier marker removed' : 'no marker written'}`,
    );
  }
  process.exitCode = code;
}

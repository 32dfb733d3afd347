// `npm run e2e`: runs the suites in e2e/suites against the cluster in KUBECONFIG, or, when none
// is given, against the local cluster (brought up or reused, with every image built and
// imported). The local cluster stays up afterwards for the next run; `npm run cluster:down`
// removes it. Extra arguments go to vitest (e.g. a suite file name to run just that one).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@homeostat/testing';
import { note, seconds } from './cluster/progress.ts';
import { localClusterWithImages } from './local-cluster.ts';

const here = dirname(fileURLToPath(import.meta.url));
const started = Date.now();

if (!process.env['KUBECONFIG']) {
  const cluster = await localClusterWithImages();
  process.env['KUBECONFIG'] = cluster.kubeconfig;
  note(`local cluster ready after ${seconds(started)} s; KUBECONFIG=${cluster.kubeconfig}`);
} else {
  note(`running against the cluster in KUBECONFIG=${process.env['KUBECONFIG']}`);
}

const suitesStarted = Date.now();
const vitest = spawn(join(repoRoot, 'node_modules/.bin/vitest'), ['run', ...process.argv.slice(2)], {
  cwd: here,
  stdio: 'inherit',
  env: process.env,
});
const code = await new Promise<number>((resolve) => vitest.once('exit', (c) => resolve(c ?? 1)));
console.error(`e2e suites finished in ${seconds(suitesStarted)} s (${seconds(started)} s in all)`);
process.exitCode = code;

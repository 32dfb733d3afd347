// `npm run e2e`: runs the suites in e2e/suites against the cluster in KUBECONFIG, or, when none
// is given, against the cluster `--cluster` names: `local` (the default: the local cluster,
// brought up or reused, with every image built and imported) or `kind` (a kind cluster of one
// control plane and `--workers` workers, default 3, with a node image built here; e2e/kind). Either
// stays up afterwards for the next run (`npm run cluster:down`, `npm run kind:down`). Other
// arguments go to vitest (e.g. a suite file name to run just that one).
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@homeostat/testing';
import { seconds } from './cluster/progress.ts';
import { clusterChoice, kindWorkers, useClusterUnderTest } from './cluster-under-test.ts';

const here = dirname(fileURLToPath(import.meta.url));
const started = Date.now();

const { values, tokens } = parseArgs({
  strict: false,
  tokens: true,
  options: { cluster: { type: 'string' }, workers: { type: 'string' } },
});
// Our options out (a value given as the next argument too), everything else in order for vitest.
const ours = new Set(
  tokens.flatMap((t) =>
    t.kind === 'option' && (t.name === 'cluster' || t.name === 'workers')
      ? [t.index, ...(t.inlineValue === false ? [t.index + 1] : [])]
      : [],
  ),
);
const vitestArgs = process.argv.slice(2).filter((_, i) => !ours.has(i));
await useClusterUnderTest(clusterChoice(values.cluster), kindWorkers(values.workers));

const suitesStarted = Date.now();
const vitest = spawn(join(repoRoot, 'node_modules/.bin/vitest'), ['run', ...vitestArgs], {
  cwd: here,
  stdio: 'inherit',
  env: process.env,
});
const code = await new Promise<number>((resolve) => vitest.once('exit', (c) => resolve(c ?? 1)));
console.error(`e2e suites finished in ${seconds(suitesStarted)} s (${seconds(started)} s in all)`);
process.exitCode = code;

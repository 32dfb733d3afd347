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
import { note, seconds } from './cluster/progress.ts';
import { kindClusterUp } from './kind/kind-cluster.ts';
import { localClusterWithImages } from './local-cluster.ts';

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
const clusterChoice = values.cluster ?? 'local';

if (clusterChoice === 'kind') {
  const workers = Number(values.workers ?? '3');
  if (!Number.isInteger(workers) || workers < 0)
    throw new Error(`--workers must be a whole number of worker nodes, not "${String(values.workers)}"`);
  const cluster = await kindClusterUp({
    workers,
    nodeImage: process.env['HOMEOSTAT_KIND_NODE_IMAGE'] === 'kind' ? 'kind' : 'built',
  });
  Object.assign(process.env, {
    KUBECONFIG: cluster.kubeconfig,
    HOMEOSTAT_KIND_CLUSTER: cluster.name,
    HOMEOSTAT_KIND_WORKERS: String(workers),
  });
  note(`kind cluster ready after ${seconds(started)} s; KUBECONFIG=${cluster.kubeconfig}`);
} else if (clusterChoice !== 'local') {
  throw new Error(`--cluster must be "local" or "kind", not "${String(clusterChoice)}"`);
} else if (!process.env['KUBECONFIG']) {
  const cluster = await localClusterWithImages();
  process.env['KUBECONFIG'] = cluster.kubeconfig;
  note(`local cluster ready after ${seconds(started)} s; KUBECONFIG=${cluster.kubeconfig}`);
} else {
  note(`running against the cluster in KUBECONFIG=${process.env['KUBECONFIG']}`);
}

const suitesStarted = Date.now();
const vitest = spawn(join(repoRoot, 'node_modules/.bin/vitest'), ['run', ...vitestArgs], {
  cwd: here,
  stdio: 'inherit',
  env: process.env,
});
const code = await new Promise<number>((resolve) => vitest.once('exit', (c) => resolve(c ?? 1)));
console.error(`e2e suites finished in ${seconds(suitesStarted)} s (${seconds(started)} s in all)`);
process.exitCode = code;

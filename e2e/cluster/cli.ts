// `npm run cluster:up` / `npm run cluster:down`: the local single-node cluster (e2e/README.md).
import { clusterDown, reportLeftovers } from './cluster-down.ts';
import { clusterUp } from './cluster-up.ts';
import { seconds } from './progress.ts';

const command = process.argv[2];
const started = Date.now();
if (command === 'up') {
  const cluster = await clusterUp();
  console.error(
    `local cluster ${cluster.reused ? 'reused' : 'up'} in ${seconds(started)} s; use it with:\n` +
      `  export KUBECONFIG=${cluster.kubeconfig}`,
  );
  process.stdout.write(`KUBECONFIG=${cluster.kubeconfig}\n`);
} else if (command === 'down') {
  const clean = reportLeftovers(await clusterDown());
  console.error(`local cluster down in ${seconds(started)} s`);
  process.exitCode = clean ? 0 : 1;
} else {
  console.error('usage: node e2e/cluster/cli.ts up|down');
  process.exitCode = 2;
}

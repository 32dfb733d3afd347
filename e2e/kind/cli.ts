// `npm run kind:up -- [--workers N] [--node-image built|kind]` and `npm run kind:down`: the kind
// cluster the suites can run on (e2e/kind/kind-cluster.ts). `npm run e2e -- --cluster kind` brings
// it up itself.
import { parseArgs } from 'node:util';
import { note } from '../cluster/progress.ts';
import { kindClusterDown, kindClusterUp, type KindNodeImageSource } from './kind-cluster.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { workers: { type: 'string', default: '3' }, 'node-image': { type: 'string', default: 'built' } },
});
const command = positionals[0] ?? 'up';
if (command === 'down') {
  const { mountsLeft } = await kindClusterDown();
  if (mountsLeft.length > 0) {
    note(`left behind (mounts of the kind cluster's Docker daemon): ${mountsLeft.join(', ')}`);
    process.exitCode = 1;
  }
} else if (command === 'up') {
  const nodeImage = values['node-image'];
  if (nodeImage !== 'built' && nodeImage !== 'kind')
    throw new Error(
      `--node-image must be "built" (made here, offline) or "kind" (kind's default), not "${nodeImage}"`,
    );
  const cluster = await kindClusterUp({
    workers: Number(values.workers),
    nodeImage: nodeImage satisfies KindNodeImageSource,
  });
  note(
    `kind cluster ready: KUBECONFIG=${cluster.kubeconfig}${cluster.dockerHost ? ` DOCKER_HOST=${cluster.dockerHost}` : ''}`,
  );
} else {
  throw new Error(`unknown command "${command}": use up or down`);
}

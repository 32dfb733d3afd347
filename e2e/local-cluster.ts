// The local cluster ready for Homeostat: up (or reused) with the operand and operator images
// built offline where stale (their bases too) and imported into its containerd. `npm start` and
// `npm run e2e` both begin here.
import { join } from 'node:path';
import { clusterUp, type LocalCluster } from './cluster/cluster-up.ts';
import { paths, stateDir } from './cluster/layout.ts';
import { note, step } from './cluster/progress.ts';
import { ensureImages } from './images/build-images.ts';
import { workloadImages } from './images/image-names.ts';

export async function localClusterWithImages(): Promise<LocalCluster> {
  const cluster = await clusterUp();
  await step('images (build what changed, import into the local cluster)', () =>
    ensureImages({
      // What runs in the cluster; base images are built when stale but never imported.
      refs: workloadImages(),
      containerd: { socket: paths.containerdSocket, importedRecord: join(stateDir, 'imported-images.json') },
      log: note,
    }),
  );
  return cluster;
}

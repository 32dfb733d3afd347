// The cluster a run of the suites or a chaos benchmark acts on, chosen the same way for both:
// `kind` (a kind cluster of one control plane and `workers` workers, brought up or reused with
// the suites' images loaded, and named in the environment so that nodes can be stopped), or the
// cluster in KUBECONFIG, or else the local cluster (brought up or reused with its images).
import { note, seconds } from './cluster/progress.ts';
import { useKindClusterUnderTest } from './harness/kind-nodes.ts';
import { kindClusterUp } from './kind/kind-cluster.ts';
import { localClusterWithImages } from './local-cluster.ts';

export type ClusterChoice = 'local' | 'kind';

/** `--cluster` as given (default local): "local" or "kind", or an error saying so. */
export function clusterChoice(value: string | boolean | undefined): ClusterChoice {
  const choice = value ?? 'local';
  if (choice !== 'local' && choice !== 'kind')
    throw new Error(`--cluster must be "local" or "kind", not "${String(choice)}"`);
  return choice;
}

/** `--workers` as given (default 3): a whole number, or an error saying so. */
export function kindWorkers(value: string | boolean | undefined): number {
  const workers = Number(value ?? '3');
  if (!Number.isInteger(workers) || workers < 0)
    throw new Error(`--workers must be a whole number of worker nodes, not "${String(value)}"`);
  return workers;
}

/**
 * Sets KUBECONFIG (and, on kind, the cluster's name, worker count and DOCKER_HOST) for this
 * process and the processes it starts; a KUBECONFIG already set is used as it is unless the
 * choice is kind.
 */
export async function useClusterUnderTest(choice: ClusterChoice, workers = 3): Promise<void> {
  const started = Date.now();
  if (choice === 'kind') {
    const cluster = await kindClusterUp({
      workers,
      nodeImage: process.env['HOMEOSTAT_KIND_NODE_IMAGE'] === 'kind' ? 'kind' : 'built',
    });
    useKindClusterUnderTest({ name: cluster.name, workers }, cluster.kubeconfig);
    note(`kind cluster ready after ${seconds(started)} s; KUBECONFIG=${cluster.kubeconfig}`);
  } else if (!process.env['KUBECONFIG']) {
    const cluster = await localClusterWithImages();
    process.env['KUBECONFIG'] = cluster.kubeconfig;
    note(`local cluster ready after ${seconds(started)} s; KUBECONFIG=${cluster.kubeconfig}`);
  } else {
    note(`running against the cluster in KUBECONFIG=${process.env['KUBECONFIG']}`);
  }
}

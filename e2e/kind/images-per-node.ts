// Which of the suites' images each kind node gets. Loading every image into every node cost a
// quarter of the loading time on the control plane, where kubeadm's taint keeps most pods away:
// only what is placed there on purpose runs there, so only that is loaded there.
import { operatorImages, suiteImages, workloadImages } from '../images/image-names.ts';

/**
 * The images that run on a tainted control-plane node: those `onControlPlaneValues` and
 * `onControlPlanePlacement` (e2e/harness/stoppable-node.ts) put there so that stopping a worker
 * never takes them away. Every operator (the node-loss suites and both chaos benchmarks pin the
 * operator there) and the S3 server (the etcd chaos benchmark on kind runs it there). Anything a
 * suite newly places on the control plane must be listed here, or its pod cannot start there.
 */
export const controlPlaneImages: readonly string[] = [...Object.values(operatorImages), suiteImages.s3];

/** A node of the cluster as far as image loading cares: its name and whether it keeps pods away. */
export interface KindNodeTaints {
  name: string;
  /** It has a NoSchedule or NoExecute taint: only pods that tolerate it run there. */
  tainted: boolean;
}

/**
 * The nodes each image is loaded into: an untainted node gets every image (a pod may land on
 * it), a tainted one (the control plane of a cluster with workers) only `controlPlaneImages`.
 */
export function nodesPerImage(
  nodes: readonly KindNodeTaints[],
  refs = workloadImages(),
): Map<string, string[]> {
  const onTainted = new Set(controlPlaneImages);
  return new Map(
    refs.map((ref) => [
      ref,
      nodes.filter((node) => !node.tainted || onTainted.has(ref)).map((node) => node.name),
    ]),
  );
}

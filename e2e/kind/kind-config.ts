// The kind cluster's configuration, the same on both paths (docs/adr/0503): one control plane and
// N workers, subnets that stay clear of the local cluster's, and the kubelet told to run on
// cgroup v1 hosts too (Kubernetes >= 1.35 refuses them unless `failCgroupV1: false`; on a cgroup v2
// host the setting changes nothing). Only the node image differs: ours, or kind's default.

/** The cluster's name; kind prefixes every node container with it. */
export const kindClusterName = 'homeostat-kind';
/** The Docker network of the nodes (kind's KIND_EXPERIMENTAL_DOCKER_NETWORK). */
export const kindNetwork = 'homeostat-kind';
/** Pods and Services of the kind cluster: clear of the local cluster's (10.244/16, 10.96/16). */
export const kindPodSubnet = '10.245.0.0/16';
export const kindServiceSubnet = '10.97.0.0/16';

export interface KindConfigOptions {
  workers: number;
  /** A node image for every node; kind's default when absent. */
  image?: string;
}

export function kindConfig(options: KindConfigOptions): object {
  const node = (role: 'control-plane' | 'worker') => ({
    role,
    ...(options.image ? { image: options.image } : {}),
  });
  return {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: kindClusterName,
    networking: { podSubnet: kindPodSubnet, serviceSubnet: kindServiceSubnet },
    nodes: [node('control-plane'), ...Array.from({ length: options.workers }, () => node('worker'))],
    kubeadmConfigPatches: [
      ['apiVersion: kubelet.config.k8s.io/v1beta1', 'kind: KubeletConfiguration', 'failCgroupV1: false'].join(
        '\n',
      ),
    ],
  };
}

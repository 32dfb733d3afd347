// The configuration files the node components read: containerd's, the CNI network, the
// kubelet's and kube-proxy's. JSON is valid YAML, so the Kubernetes ones are written as JSON.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { network, paths, ports, runcPath, runDir } from './layout.ts';
import { clusterImages } from '../images/image-names.ts';

export const configFiles = {
  containerd: join(paths.config, 'containerd.toml'),
  cni: join(paths.cniConf, '10-homeostat.conflist'),
  kubelet: join(paths.config, 'kubelet.json'),
  kubeProxy: join(paths.config, 'kube-proxy.json'),
  /** Pods with dnsPolicy Default get this: no upstream resolver, so no lookup leaves the machine. */
  podResolvConf: join(paths.config, 'resolv.conf'),
};

/** Writes every node component's configuration files. */
export async function writeComponentConfig(kubeconfig: string, caCert: string): Promise<void> {
  await mkdir(paths.config, { recursive: true });
  await mkdir(paths.cniConf, { recursive: true });
  await writeFile(configFiles.containerd, containerdToml());
  await writeFile(configFiles.cni, JSON.stringify(cniConflist(), null, 2));
  await writeFile(configFiles.kubelet, JSON.stringify(kubeletConfig(caCert), null, 2));
  await writeFile(configFiles.kubeProxy, JSON.stringify(kubeProxyConfig(kubeconfig), null, 2));
  await writeFile(
    configFiles.podResolvConf,
    '# homeostat local cluster: no upstream name server; only cluster names resolve (through CoreDNS)\n',
  );
}

// containerd 2 (built from the Go module proxy; kubelet >= 1.36 needs it) in its config version 4,
// where each listener is a server plugin and the CRI plugin is split into images and runtime.
// Everything it writes stays under our directories (state, sockets, shim sockets; no NRI socket in
// /run/nri), and a config file given with --config imports no drop-in from /etc/containerd, so a
// Docker daemon or another containerd on the machine is unaffected and `down` finds nothing
// outside our directories.
function containerdToml(): string {
  const images = "plugins.'io.containerd.cri.v1.images'";
  const runtime = "plugins.'io.containerd.cri.v1.runtime'";
  return `version = 4
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"

[plugins.'io.containerd.server.v1.grpc']
  address = "${paths.containerdSocket}"

[plugins.'io.containerd.server.v1.ttrpc']
  address = "${paths.containerdSocket}.ttrpc"

[plugins.'io.containerd.shim.v1.manager']
  socket_dir = "${paths.shimSockets}"

[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.internal.v1.opt']
  path = "${paths.containerdRoot}/opt"

[${images}]
  snapshotter = "overlayfs"

[${images}.pinned_images]
  sandbox = "${clusterImages.pause}"

[${runtime}]
  # Pod network namespaces under containerd's state directory rather than /run/netns, which
  # \`ip netns\` (a user's, a test's) shares and turns into a mount point of its own: \`down\` then
  # finds them with the cluster's other mounts and never has to touch /run/netns.
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = false
  enable_unprivileged_icmp = false
  # These machines withhold CAP_SYS_RESOURCE, so no process may lower its OOM score below its
  # parent's; without this, every pod sandbox (oom_score_adj -998) fails to start.
  restrict_oom_score_adj = true

[${runtime}.containerd]
  default_runtime_name = "runc"

[${runtime}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${runtime}.containerd.runtimes.runc.options]
  BinaryName = "${runcPath}"
  Root = "${runDir}/runc"
  # cgroupfs: these machines run cgroup v1 without systemd as init (docs/adr/0502).
  SystemdCgroup = false

[${runtime}.cni]
  bin_dirs = ["/usr/lib/cni"]
  conf_dir = "${paths.cniConf}"
  max_conf_num = 1
`;
}

function cniConflist() {
  return {
    cniVersion: '1.0.0',
    name: 'homeostat',
    plugins: [
      {
        type: 'bridge',
        bridge: network.bridge,
        isGateway: true,
        // No masquerading: pod traffic has nowhere to go but other pods and this machine.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: paths.cniIpam,
          ranges: [[{ subnet: network.podSubnet, gateway: network.nodeIp }]],
          routes: [{ dst: '0.0.0.0/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

function kubeletConfig(caCert: string) {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: network.nodeIp,
    port: ports.kubelet,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: ports.kubeletHealthz,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: caCert },
    },
    authorization: { mode: 'Webhook' },
    // These machines run cgroup v1 without systemd as init; kubelet >= 1.35 refuses cgroup v1
    // unless told not to (docs/adr/0502). containerd reports the same driver through the CRI.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    clusterDNS: [network.dnsServiceIp],
    clusterDomain: network.clusterDomain,
    resolvConf: configFiles.podResolvConf,
    podCIDR: network.podSubnet,
    failSwapOn: false,
    // The machine's disk is shared with other work (caches of tens of GB): a percentage of a large
    // disk evicts pods while gigabytes are free, so evict only when it is really short.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '2Gi', 'imagefs.available': '2Gi' },
    // Never garbage-collect images: nothing here can be pulled again (no registry), and a collected
    // operand image fails the next pod that needs it. Seen at 93% disk use with 18 GB free.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    registerNode: true,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    enableServer: true,
  };
}

function kubeProxyConfig(kubeconfig: string) {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    hostnameOverride: network.nodeName,
    clusterCIDR: network.clusterCidr,
    clientConnection: { kubeconfig },
    bindAddress: network.nodeIp,
    healthzBindAddress: `127.0.0.1:${ports.kubeProxyHealthz}`,
    metricsBindAddress: `127.0.0.1:${ports.kubeProxyMetrics}`,
    // NodePorts only on the bridge, never on the machine's real interfaces.
    nodePortAddresses: [network.podSubnet],
    // Leaves net.ipv4.conf.all.route_localnet alone (localhost NodePorts would need it).
    iptables: { localhostNodePorts: false, masqueradeAll: false },
    // Zero means "leave the machine's conntrack settings as they are".
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}

// Where the local cluster keeps its state, and the fixed addresses it uses. Everything the
// cluster writes lives under `stateDir` and `runDir`, so `down` can remove it in one go.
import { join } from 'node:path';

/** Persistent state: certificates, etcd data, containerd's image store, kubelet's root dir, logs. */
export const stateDir = process.env['HOMEOSTAT_CLUSTER_DIR'] ?? '/var/lib/homeostat-cluster';
/** Runtime state that must not survive a reboot: containerd's sockets and task state. */
export const runDir = '/run/homeostat-cluster';

export const paths = {
  pki: join(stateDir, 'pki'),
  logs: join(stateDir, 'logs'),
  pids: join(stateDir, 'pids'),
  etcdData: join(stateDir, 'etcd'),
  kubelet: join(stateDir, 'kubelet'),
  containerdRoot: join(stateDir, 'containerd'),
  containerdState: join(runDir, 'containerd'),
  containerdSocket: join(runDir, 'containerd', 'containerd.sock'),
  /** The shims' sockets (containerd's default is /run/containerd/s, shared with any other containerd). */
  shimSockets: join(runDir, 's'),
  cniConf: join(stateDir, 'cni', 'net.d'),
  cniIpam: join(stateDir, 'cni', 'ipam'),
  config: join(stateDir, 'config'),
  /** Where the default StorageClass's volumes live on the node (one directory per volume). */
  localVolumes: join(stateDir, 'local-path'),
  /** The machine's settings before the first `up`, restored by `down`. */
  before: join(stateDir, 'before.json'),
  /** Written last by `up`; its presence means "a cluster was fully brought up here". */
  ready: join(stateDir, 'ready.json'),
  /** The admin kubeconfig handed to users and the e2e suites. */
  kubeconfig: join(stateDir, 'kubeconfig'),
};

/** The OCI runtime containerd's shim runs: Debian's runc (docs/adr/0502 says why not a built one). */
export const runcPath = '/usr/sbin/runc';

/** The node's name and the addresses on the bridge that carries pod traffic. */
export const network = {
  nodeName: 'homeostat-node',
  bridge: 'homeostat0',
  /** The bridge's own address: the node IP, where kube-apiserver and the kubelet listen. */
  nodeIp: '10.244.0.1',
  podSubnet: '10.244.0.0/24',
  clusterCidr: '10.244.0.0/16',
  serviceCidr: '10.96.0.0/16',
  kubernetesServiceIp: '10.96.0.1',
  dnsServiceIp: '10.96.0.10',
  clusterDomain: 'cluster.local',
};

/** Fixed ports. The host-only ones sit on loopback, where pods cannot reach them. */
export const ports = {
  apiServer: 6443,
  etcdClient: 12379,
  etcdPeer: 12380,
  controllerManager: 10257,
  scheduler: 10259,
  kubelet: 10250,
  kubeletHealthz: 10248,
  kubeProxyHealthz: 10256,
  kubeProxyMetrics: 10249,
  /** kube-router's health endpoint; it binds every address (it has no flag for one). */
  kubeRouterHealthz: 20244,
};

/** Prefix of the iptables chains this launcher creates itself. */
export const chainPrefix = 'HOMEOSTAT-';

export const apiServerUrl = `https://${network.nodeIp}:${ports.apiServer}`;

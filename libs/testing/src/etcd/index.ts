// Real etcd members and clusters on loopback for tests (`@homeostat/testing/etcd`).
export {
  allocateEtcdMember,
  destroyEtcdMember,
  etcdMemberArgs,
  startEtcdMember,
  type EtcdJoin,
  type EtcdMemberAddress,
  type EtcdMemberOptions,
  type RunningEtcdMember,
} from './etcd-member.ts';
export {
  initialClusterOf,
  startEtcdCluster,
  type EtcdClusterOptions,
  type EtcdTestCluster,
} from './etcd-cluster.ts';
export { createEtcdClientTls, etcdClientTlsFlags, type EtcdClientTls } from './etcd-tls.ts';

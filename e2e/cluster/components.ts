// How each host process of the cluster is started: binary, flags, and the check that says it is
// ready. Every component authenticates with the one admin certificate: this is a throwaway test
// cluster, and per-component identities would add certificates without testing anything.
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { binaryPath, httpGet, type ControlPlanePki } from '@homeostat/testing';
import { configFiles } from './component-config.ts';
import { apiServerUrl, network, paths, ports } from './layout.ts';
import { type DaemonSpec } from './daemons.ts';
import { tryRun } from './run-command.ts';

export interface Component {
  spec: DaemonSpec;
  /** True once the component serves. */
  ready(): Promise<boolean>;
}

const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
// The node's tools (mount, iptables) come from the machine's usual places; containerd finds its
// shim (containerd-shim-runc-v2) on PATH, so the folder of the built containerd comes first.
const systemPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The cluster's components in start order, given its certificates and component kubeconfig. */
export function components(pki: ControlPlanePki, kubeconfig: string): Record<string, Component> {
  const adminTls = { ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey };
  const clientFlags = [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
  ];
  const env = { ...process.env, PATH: `${systemPath}:${process.env['PATH'] ?? ''}` };
  const containerdEnv = { ...env, PATH: `${dirname(binaryPath('containerd-shim-runc-v2'))}:${env.PATH}` };
  return {
    etcd: {
      spec: {
        name: 'etcd',
        command: binaryPath('etcd'),
        args: [
          `--name=${network.nodeName}`,
          `--data-dir=${paths.etcdData}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-cluster=${network.nodeName}=http://127.0.0.1:${ports.etcdPeer}`,
          // A test cluster's data is disposable; fsync on a shared disk would slow every write.
          '--unsafe-no-fsync',
          '--log-level=warn',
        ],
      },
      ready: async () => (await httpGet(`${etcdUrl}/health`)).body.includes('"health":"true"'),
    },
    containerd: {
      spec: {
        name: 'containerd',
        command: binaryPath('containerd'),
        args: ['--config', configFiles.containerd],
        env: containerdEnv,
      },
      ready: async () =>
        (
          await tryRun(binaryPath('ctr'), ['--address', paths.containerdSocket, 'version'], {
            timeoutMs: 5000,
          })
        ).ok,
    },
    'kube-apiserver': {
      spec: {
        name: 'kube-apiserver',
        command: binaryPath('kube-apiserver'),
        args: [
          `--etcd-servers=${etcdUrl}`,
          `--bind-address=${network.nodeIp}`,
          `--advertise-address=${network.nodeIp}`,
          `--secure-port=${ports.apiServer}`,
          `--tls-cert-file=${pki.servingCert}`,
          `--tls-private-key-file=${pki.servingKey}`,
          `--client-ca-file=${pki.caCert}`,
          `--kubelet-client-certificate=${pki.adminCert}`,
          `--kubelet-client-key=${pki.adminKey}`,
          // The node's name is not in any DNS; logs and exec reach the kubelet by its address.
          '--kubelet-preferred-address-types=InternalIP',
          '--authorization-mode=Node,RBAC',
          '--enable-admission-plugins=NodeRestriction',
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${pki.serviceAccountPub}`,
          `--service-account-signing-key-file=${pki.serviceAccountKey}`,
          `--service-cluster-ip-range=${network.serviceCidr}`,
          '--allow-privileged=true',
          '--profiling=false',
          '--v=1',
        ],
      },
      ready: async () => (await httpGet(`${apiServerUrl}/readyz`, adminTls)).status === 200,
    },
    'kube-controller-manager': {
      spec: {
        name: 'kube-controller-manager',
        command: binaryPath('kube-controller-manager'),
        args: [
          ...clientFlags,
          '--bind-address=127.0.0.1',
          `--secure-port=${ports.controllerManager}`,
          '--leader-elect=false',
          '--use-service-account-credentials=true',
          `--root-ca-file=${pki.caCert}`,
          `--service-account-private-key-file=${pki.serviceAccountKey}`,
          `--cluster-signing-cert-file=${pki.caCert}`,
          `--cluster-signing-key-file=${pki.caKey}`,
          `--service-cluster-ip-range=${network.serviceCidr}`,
          '--controllers=*,bootstrapsigner,tokencleaner',
          '--profiling=false',
          '--v=1',
        ],
      },
      ready: async () => await selfSignedHealthz(ports.controllerManager),
    },
    'kube-scheduler': {
      spec: {
        name: 'kube-scheduler',
        command: binaryPath('kube-scheduler'),
        args: [
          ...clientFlags,
          '--bind-address=127.0.0.1',
          `--secure-port=${ports.scheduler}`,
          '--leader-elect=false',
          '--v=1',
        ],
      },
      ready: async () => await selfSignedHealthz(ports.scheduler),
    },
    kubelet: {
      spec: {
        name: 'kubelet',
        command: binaryPath('kubelet'),
        args: [
          `--config=${configFiles.kubelet}`,
          `--kubeconfig=${kubeconfig}`,
          `--root-dir=${paths.kubelet}`,
          `--cert-dir=${join(paths.kubelet, 'pki')}`,
          `--hostname-override=${network.nodeName}`,
          `--node-ip=${network.nodeIp}`,
          '--v=1',
        ],
        env,
      },
      ready: async () => (await httpGet(`http://127.0.0.1:${ports.kubeletHealthz}/healthz`)).body === 'ok',
    },
    'kube-proxy': {
      spec: {
        name: 'kube-proxy',
        command: binaryPath('kube-proxy'),
        args: [`--config=${configFiles.kubeProxy}`, '--v=1'],
        env,
      },
      ready: async () => (await httpGet(`http://127.0.0.1:${ports.kubeProxyHealthz}/healthz`)).status === 200,
    },
    // The cluster's NetworkPolicy implementation (ADR 0504): kube-router's network policy controller
    // alone, in iptables and ipsets beside kube-proxy's; its routing, service proxy and CNI stay
    // off (the bridge plugin and kube-proxy do those jobs here).
    'kube-router': {
      spec: {
        name: 'kube-router',
        command: binaryPath('kube-router'),
        args: [
          `--kubeconfig=${kubeconfig}`,
          `--hostname-override=${network.nodeName}`,
          '--run-firewall=true',
          '--run-router=false',
          '--run-service-proxy=false',
          '--run-loadbalancer=false',
          '--enable-cni=false',
          '--enable-ipv6=false',
          `--service-cluster-ip-range=${network.serviceCidr}`,
          `--health-port=${ports.kubeRouterHealthz}`,
          '--v=1',
        ],
        // ipset, iptables-save and iptables-restore from the machine.
        env,
      },
      ready: async () =>
        (await httpGet(`http://127.0.0.1:${ports.kubeRouterHealthz}/healthz`)).status === 200,
    },
  };
}

// The controller-manager and scheduler serve /healthz on loopback with a certificate they sign
// themselves; the answer matters here, not the server's identity.
function selfSignedHealthz(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET https://127.0.0.1:${port}/healthz timed out`)));
    req.on('error', reject);
    req.end();
  });
}

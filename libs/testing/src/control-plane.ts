import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { binaryPath, kubernetesVersion } from './binaries.ts';
import { installCrds } from './crds.ts';
import { freeLoopbackPort } from './free-port.ts';
import { writeAdminKubeconfig } from './kubeconfig.ts';
import { logTail, startProcess, type ManagedProcess } from './managed-process.ts';
import { createControlPlanePki, type ControlPlanePki } from './pki.ts';
import { httpGet, waitUntil } from './readiness.ts';

export interface ControlPlaneOptions {
  /** CRD YAML files to install (and wait for) before the control plane is handed out. */
  crds?: readonly string[];
  /** Extra kube-apiserver flags, appended last so they win. */
  apiServerFlags?: readonly string[];
  /** Keep the working directory (certificates, logs, etcd data) after stop(), for debugging. */
  keepWorkDir?: boolean;
  /** How long etcd and the API server together may take to become ready. Default 60 s. */
  startTimeoutMs?: number;
}

/** A running etcd + kube-apiserver pair on loopback, with an admin kubeconfig. */
export interface ControlPlane {
  /** A ready client configuration (cluster admin). */
  readonly kubeConfig: KubeConfig;
  /** Absolute path of a self-contained kubeconfig file that kubectl accepts. */
  readonly kubeconfigPath: string;
  /** The API server URL, https://127.0.0.1:<port>. */
  readonly server: string;
  /** etcd's client URL, for tests that compact or inspect storage directly. */
  readonly etcdEndpoint: string;
  /** The pinned Kubernetes version the API server reports. */
  readonly version: string;
  /** Certificates, keys, logs and etcd data live here. */
  readonly workDir: string;
  /** The processes currently running (etcd, kube-apiserver). */
  processes(): ManagedProcess[];
  /** Stops the API server, waits `downtimeMs`, starts it again on the same port and waits for /readyz. */
  restartApiServer(downtimeMs?: number): Promise<void>;
  /** Stops every process this control plane started and removes its working directory. */
  stop(): Promise<void>;
}

const serviceClusterIpRange = '10.0.0.0/24';
const kubernetesServiceIp = '10.0.0.1';
const portRetries = 3;

/**
 * Starts etcd and kube-apiserver on free loopback ports, with generated certificates, RBAC on and
 * a service-account signing key, waits for /readyz, installs the given CRDs and returns a ready
 * control plane. Processes die with the test run even if it is killed (see managed-process.ts).
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const workDir = await mkdtemp(join(tmpdir(), 'homeostat-control-plane-'));
  try {
    const pki = await createControlPlanePki(workDir, kubernetesServiceIp);
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnFreshPorts(workDir, pki, options);
      } catch (error) {
        // Another process may take a port between our probe and the server's bind; try others.
        if (attempt < portRetries && /address already in use/i.test(String(error))) continue;
        throw error;
      }
    }
  } catch (error) {
    if (!options.keepWorkDir) await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}

async function startOnFreshPorts(
  workDir: string,
  pki: ControlPlanePki,
  options: ControlPlaneOptions,
): Promise<ControlPlane> {
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const [etcdClientPort, etcdPeerPort, apiPort] = await distinctFreePorts(3);
  const etcdEndpoint = `http://127.0.0.1:${etcdClientPort}`;
  const server = `https://127.0.0.1:${apiPort}`;
  const etcdDataDir = join(workDir, 'etcd-data');
  await rm(etcdDataDir, { recursive: true, force: true });
  await mkdir(etcdDataDir, { mode: 0o700 });

  const etcd = startProcess({
    name: 'etcd',
    command: binaryPath('etcd'),
    logFile: join(workDir, 'etcd.log'),
    args: [
      '--name=default',
      `--data-dir=${etcdDataDir}`,
      `--listen-client-urls=${etcdEndpoint}`,
      `--advertise-client-urls=${etcdEndpoint}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
      // Test data is thrown away; skipping fsync makes every write much cheaper.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
  });
  const processes: { etcd: ManagedProcess; apiServer?: ManagedProcess } = { etcd };
  const stopAll = async () => {
    await processes.apiServer?.stop();
    await processes.etcd.stop();
  };

  try {
    await waitUntil(
      'etcd',
      async () => (await httpGet(`${etcdEndpoint}/health`)).body.includes('"health":"true"'),
      { timeoutMs, abort: exitReason(etcd), describe: () => logTail(etcd.logFile) },
    );

    const apiServerArgs = [
      `--etcd-servers=${etcdEndpoint}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // Kubernetes >= 1.37 refuses a loopback advertise address for the endpoints of the
      // `kubernetes` Service; no pod runs here to use them, so nothing maintains them.
      '--endpoint-reconciler-type=none',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${serviceClusterIpRange}`,
      '--allow-privileged=true',
      '--profiling=false',
      '--v=1',
      ...(options.apiServerFlags ?? []),
    ];
    const startApiServer = async (): Promise<ManagedProcess> => {
      const apiServer = startProcess({
        name: 'kube-apiserver',
        command: binaryPath('kube-apiserver'),
        logFile: join(workDir, 'kube-apiserver.log'),
        args: apiServerArgs,
      });
      processes.apiServer = apiServer;
      await waitUntil(
        'kube-apiserver /readyz',
        async () =>
          (await httpGet(`${server}/readyz`, { ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey }))
            .status === 200,
        { timeoutMs, abort: exitReason(apiServer), describe: () => logTail(apiServer.logFile) },
      );
      return apiServer;
    };
    await startApiServer();

    const kubeconfigPath = join(workDir, 'kubeconfig');
    const kubeConfig = await writeAdminKubeconfig(kubeconfigPath, server, pki);
    // /readyz can pass a moment before the bootstrap controller has written `default`.
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await waitUntil(
      'the default namespace',
      async () => Boolean(await core.readNamespace({ name: 'default' })),
      {
        timeoutMs,
      },
    );
    if (options.crds?.length) await installCrds(kubeConfig, options.crds);

    let stopped = false;
    return {
      kubeConfig,
      kubeconfigPath,
      server,
      etcdEndpoint,
      version: kubernetesVersion,
      workDir,
      processes: () => [processes.etcd, ...(processes.apiServer ? [processes.apiServer] : [])],
      async restartApiServer(downtimeMs = 0) {
        await processes.apiServer?.stop();
        delete processes.apiServer;
        if (downtimeMs > 0) await sleep(downtimeMs);
        await startApiServer();
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        if (!options.keepWorkDir) await rm(workDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Resolves with a reason when the process exits; never resolves while it is healthy. */
function exitReason(process: ManagedProcess): Promise<string> {
  return process.exited.then((code) => `${process.name} exited (${code}); its log ends:`);
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freeLoopbackPort());
  return [...ports];
}

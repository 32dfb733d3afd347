// `kubectl homeostat psql CLUSTER` and `etcdctl CLUSTER`: a client session as an application has
// it, from a short-lived pod that mounts the cluster's client Secret (the app Secret's uri with
// verify-full TLS; the etcd client certificate) and connects through the cluster's Service. The
// pod runs the cluster's own image (nothing else to pull), under Pod Security "restricted", and is
// deleted when the session ends. The credentials stay in the pod: none is read by the plugin.
import { randomBytes } from 'node:crypto';
import { findResource } from '../find-resource.ts';
import { kindNamed } from '../kinds.ts';
import { getJson, kubectl, kubectlAttached, type KubectlTarget } from '../kubectl.ts';
import { waitFor } from '../wait.ts';
import type { Resource } from '../status-view.ts';

interface Pod {
  spec?: { containers?: { name: string; image?: string }[] };
  status?: {
    phase?: string;
    containerStatuses?: { state?: { terminated?: { exitCode: number } } }[];
  };
}

interface PodList {
  items: Pod[];
}

export interface ClientPod {
  name: string;
  image: string;
  /** Container command (argv). */
  command: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  secret: { name: string; mountPath: string };
}

/** The `kubectl run --overrides` of a client pod: restricted, the Secret mounted read-only. */
export function clientPodOverrides(pod: ClientPod, tty: boolean): string {
  return JSON.stringify({
    apiVersion: 'v1',
    metadata: {
      labels: { 'app.kubernetes.io/part-of': 'homeostat', 'app.kubernetes.io/component': 'client-session' },
    },
    spec: {
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'client',
          image: pod.image,
          command: pod.command,
          stdin: tty,
          stdinOnce: tty,
          tty,
          env: [{ name: 'HOME', value: '/tmp' }, ...pod.env],
          volumeMounts: [{ name: 'client-secret', mountPath: pod.secret.mountPath, readOnly: true }],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
      volumes: [{ name: 'client-secret', secret: { secretName: pod.secret.name } }],
    },
  });
}

async function imageOf(target: KubectlTarget, selector: string, container: string): Promise<string> {
  const pods = await getJson<PodList>(target, ['pods', '-l', selector]);
  for (const pod of pods?.items ?? []) {
    const image = pod.spec?.containers?.find((c) => c.name === container)?.image;
    if (image) return image;
  }
  throw new Error(`no pod of the cluster (${selector}) to take the ${container} image from`);
}

function sessionName(cluster: string, tool: string): string {
  return `${cluster.slice(0, 40)}-${tool}-${randomBytes(3).toString('hex')}`;
}

/** The client pod of a psql session on `cluster`; `superuser` uses the superuser's Secret. */
export async function psqlPod(
  target: KubectlTarget,
  clusterName: string,
  args: readonly string[],
  superuser: boolean,
): Promise<ClientPod> {
  const kind = kindNamed('pgc');
  if (!kind) throw new Error('the PostgreSQLCluster kind is missing from the plugin');
  const { resource } = await findResource(target, clusterName, [kind]);
  const cluster = resource.metadata?.name ?? clusterName;
  const selector = String(resource.status?.['selector'] ?? `postgres.homeostat.dev/cluster=${cluster}`);
  const secret = superuser ? `${cluster}-superuser` : `${cluster}-app`;
  return {
    name: sessionName(cluster, 'psql'),
    image: await imageOf(target, selector, 'postgres'),
    command: ['sh', '-c', 'exec psql "$DATABASE_URL" "$@"', 'psql', ...args],
    env: [
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: secret, key: 'uri' } } },
      { name: 'PGSSLROOTCERT', value: '/secrets/client/ca.crt' },
    ],
    secret: { name: secret, mountPath: '/secrets/client' },
  };
}

/** The client pod of an etcdctl command on `cluster` (default: `endpoint status -w table`). */
export async function etcdctlPod(
  target: KubectlTarget,
  clusterName: string,
  args: readonly string[],
): Promise<ClientPod> {
  const kind = kindNamed('etcdc');
  if (!kind) throw new Error('the EtcdCluster kind is missing from the plugin');
  const { resource } = await findResource<Resource>(target, clusterName, [kind]);
  const cluster = resource.metadata?.name ?? clusterName;
  const status = resource.status ?? {};
  const endpoint = status['clientEndpoint'];
  const secret = status['clientSecret'];
  if (typeof endpoint !== 'string' || typeof secret !== 'string')
    throw new Error(
      `${cluster} has no client endpoint and Secret in its status yet (phase ${String(status['phase'])})`,
    );
  const selector = String(status['selector'] ?? `etcd.homeostat.dev/cluster=${cluster}`);
  return {
    name: sessionName(cluster, 'etcdctl'),
    image: await imageOf(target, selector, 'etcd'),
    command: ['etcdctl', ...(args.length > 0 ? args : ['endpoint', 'status', '-w', 'table'])],
    env: [
      { name: 'ETCDCTL_ENDPOINTS', value: endpoint },
      { name: 'ETCDCTL_CACERT', value: '/secrets/client/ca.crt' },
      { name: 'ETCDCTL_CERT', value: '/secrets/client/tls.crt' },
      { name: 'ETCDCTL_KEY', value: '/secrets/client/tls.key' },
    ],
    secret: { name: secret, mountPath: '/secrets/client' },
  };
}

/**
 * Runs the session; resolves with the client's exit code. On a terminal it is attached (`kubectl
 * run -it --rm`). Otherwise (a script, a pipe) attaching races a short command's end and can lose
 * its output, so the pod runs unattached, its log is printed once it has ended, and it is deleted.
 */
export async function runSession(target: KubectlTarget, pod: ClientPod, tty: boolean): Promise<number> {
  if (tty) {
    return kubectlAttached(target, [
      'run',
      pod.name,
      `--image=${pod.image}`,
      '--restart=Never',
      '--rm',
      '--quiet',
      '--pod-running-timeout=2m',
      '-it',
      `--overrides=${clientPodOverrides(pod, true)}`,
    ]);
  }
  await kubectl(target, [
    'run',
    pod.name,
    `--image=${pod.image}`,
    '--restart=Never',
    `--overrides=${clientPodOverrides(pod, false)}`,
  ]);
  try {
    let exitCode: number | undefined;
    await waitFor(`client pod ${pod.name} finished`, 120_000, async () => {
      const current = await getJson<Pod>(target, ['pod', pod.name]);
      const terminated = current?.status?.containerStatuses?.[0]?.state?.terminated;
      if (terminated) {
        exitCode = terminated.exitCode;
        return true;
      }
      return `phase ${current?.status?.phase ?? 'unknown'}`;
    });
    process.stdout.write(await kubectl(target, ['logs', pod.name]));
    return exitCode ?? 1;
  } finally {
    await kubectl(target, ['delete', 'pod', pod.name, '--wait=false', '--ignore-not-found']).catch(
      () => undefined,
    );
  }
}

// Waiting on workloads and running one-shot client pods: the building blocks suites use to
// check that something really answers inside the cluster.
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { oneReplicaDeployment } from '../cluster/one-replica-deployment.ts';
import { kubectl } from './cluster-access.ts';

/** Ready, and not on its way out (a terminating pod may still report Ready). */
export function isPodReady(pod: V1Pod): boolean {
  return (
    !pod.metadata?.deletionTimestamp &&
    (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  );
}

/** A container security context that passes the `restricted` Pod Security Standard. */
export function restrictedSecurityContext(runAsUser: number) {
  return {
    runAsNonRoot: true,
    runAsUser,
    runAsGroup: runAsUser,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** A one-replica Deployment of one container and the Service in front of it. */
export interface ServedDeployment {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** The container (its image pull policy defaults to IfNotPresent: nothing can be pulled here). */
  container: { name: string; image: string } & Record<string, unknown>;
  /** Pod fields beside the container, e.g. `volumes` or a pod `securityContext`. */
  podSpec?: Record<string, unknown>;
  /** The Service's ports. */
  ports: readonly { name: string; port: number; targetPort: number | string }[];
}

/** The Deployment and Service objects of `served`, for `apply`. */
export function servedDeployment(served: ServedDeployment): object[] {
  const { name, namespace, labels } = served;
  return [
    oneReplicaDeployment({
      name,
      namespace,
      labels,
      podSpec: { ...served.podSpec, containers: [{ imagePullPolicy: 'IfNotPresent', ...served.container }] },
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: { selector: labels, ports: served.ports },
    },
  ];
}

/** Waits until a Deployment's rollout is complete (all replicas updated and available). */
export async function waitForDeployment(
  namespace: string,
  name: string,
  timeoutSeconds = 180,
): Promise<void> {
  await kubectl(['-n', namespace, 'rollout', 'status', `deployment/${name}`, `--timeout=${timeoutSeconds}s`]);
}

export interface ClientPodResult {
  phase: string;
  logs: string;
}

/**
 * Runs a pod with one container to completion and returns its phase and logs. The pod is
 * deleted afterwards. Use it to reach Services from inside the cluster, as a workload would.
 */
export async function runClientPod(options: {
  namespace: string;
  name: string;
  image: string;
  command: readonly string[];
  runAsUser: number;
  timeoutSeconds?: number;
  /** Environment of the container (a Secret's key through `valueFrom`, so it never shows in a spec). */
  env?: readonly object[];
  /** A PersistentVolumeClaim to mount, e.g. to show that data outlives the pod that wrote it. */
  claim?: { name: string; mountPath: string };
  /** A Secret mounted read-only (client certificates, say). */
  secret?: { name: string; mountPath: string };
  /** The container's memory limit (default 64Mi; a `node` client needs more). */
  memoryLimit?: string;
  /** The pod's labels (what a NetworkPolicy's podSelector picks clients by). */
  labels?: Readonly<Record<string, string>>;
}): Promise<ClientPodResult> {
  const volumeMounts = [
    ...(options.claim ? [{ name: 'claim', mountPath: options.claim.mountPath }] : []),
    ...(options.secret ? [{ name: 'secret', mountPath: options.secret.mountPath, readOnly: true }] : []),
  ];
  const volumes = [
    ...(options.claim ? [{ name: 'claim', persistentVolumeClaim: { claimName: options.claim.name } }] : []),
    ...(options.secret ? [{ name: 'secret', secret: { secretName: options.secret.name } }] : []),
  ];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      ...(options.labels ? { labels: { ...options.labels } } : {}),
    },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'client',
          image: options.image,
          imagePullPolicy: 'IfNotPresent',
          command: [...options.command],
          ...(options.env ? { env: [...options.env] } : {}),
          securityContext: restrictedSecurityContext(options.runAsUser),
          resources: {
            requests: { cpu: '10m', memory: '16Mi' },
            limits: { memory: options.memoryLimit ?? '64Mi' },
          },
          ...(volumeMounts.length ? { volumeMounts } : {}),
        },
      ],
      ...(volumes.length ? { volumes } : {}),
    },
  };
  await kubectl(['apply', '--server-side', '--field-manager=homeostat-e2e', '-f', '-'], JSON.stringify(pod));
  try {
    let phase = '';
    // Poll rather than `kubectl wait`: a pod that fails must end the wait as quickly as one that succeeds.
    await waitUntil(
      `client pod ${options.namespace}/${options.name} finished`,
      async () => {
        phase = (
          await kubectl([
            '-n',
            options.namespace,
            'get',
            'pod',
            options.name,
            '-o',
            'jsonpath={.status.phase}',
          ])
        ).trim();
        return phase === 'Succeeded' || phase === 'Failed';
      },
      { timeoutMs: (options.timeoutSeconds ?? 120) * 1000, intervalMs: 1000 },
    );
    const logs = await kubectl(['-n', options.namespace, 'logs', options.name]).catch((e: unknown) =>
      String(e),
    );
    return { phase, logs };
  } finally {
    await kubectl([
      '-n',
      options.namespace,
      'delete',
      'pod',
      options.name,
      '--ignore-not-found',
      '--wait=false',
    ]);
  }
}

// The StatefulSet that runs one Memcached's pods under stable names (ADR 0404), as the operator wants it.
import type {
  V1Affinity,
  V1Container,
  V1EnvVar,
  V1ResourceRequirements,
  V1StatefulSet,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { restartAnnotations, topologySpreadConstraints } from '@homeostat/operator-kit';
import { exporterPort } from '../api/memcached-schema.ts';
import type { Memcached } from '../api/memcached-types.ts';
import {
  exporterSaslArgs,
  memcachedArgs,
  memcachedEnv,
  podLayout,
  sidecarRuns,
  statsAddress,
} from './memcached-command.ts';
import { operandLabels, ownedObjectMeta, selectorLabels } from './operand-labels.ts';
import type { ReferencedSecrets } from './referenced-secrets.ts';
import { saslDatabaseEnv, saslDatabaseScript } from './sasl-database.ts';

/** Pod annotation naming the versions of the Secrets the pods read at start (see ReferencedSecrets). */
export const secretRevisionAnnotation = 'cache.homeostat.dev/secret-revision';

/** uid and gid of the `memcache` user in the official memcached image; any non-root id works. */
export const memcachedUserId = 11211;

/** Memory beyond `-m` for connection buffers and the hash table, in MiB. */
export const memoryHeadroomMiB = 32;

/** The container's requests and limits: the CR's values, with memory derived from memoryLimitMB where unset. */
export function desiredResources(memcached: Memcached): {
  requests: Record<string, string>;
  limits: Record<string, string>;
} {
  const { resources, memoryLimitMB } = memcached.spec;
  const memory = `${memoryLimitMB + memoryHeadroomMiB}Mi`;
  const requests: Record<string, string> = { cpu: '50m', memory, ...definedOnly(resources?.requests) };
  const limits: Record<string, string> = { memory, ...definedOnly(resources?.limits) };
  // A request larger than a user-set limit would be rejected; fall back to the limit.
  if (resources?.limits?.memory && !resources.requests?.memory) requests['memory'] = resources.limits.memory;
  if (resources?.limits?.cpu && !resources.requests?.cpu) requests['cpu'] = resources.limits.cpu;
  return { requests, limits };
}

function definedOnly(list: { cpu?: string; memory?: string } | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(list ?? {}).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

function defaultAffinity(name: string): V1Affinity {
  // Spread pods over nodes where possible, so one node failure takes out few cache shards.
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: selectorLabels(name) },
          },
        },
      ],
    },
  };
}

/** Whether the metrics sidecar runs in the pods (see sidecarRuns). */
export function exporterRuns(memcached: Memcached): boolean {
  return sidecarRuns(memcached.spec);
}

/** The images a Memcached runs when its spec names none. */
export interface DefaultImages {
  readonly memcached: string;
  readonly exporter: string;
}

const restrictedContainer = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/**
 * The metrics sidecar: one connection to memcached over loopback, its stats on the metrics port.
 * Its liveness is its own (it answers memcached_up 0 while memcached is down), never memcached's.
 */
function exporterContainer(memcached: Memcached, image: string): V1Container {
  const { sasl } = memcached.spec;
  // With SASL it authenticates as the Secret's user, from the copy the database was built from
  // (exporterSaslArgs), mounted read-only.
  return {
    name: 'exporter',
    image: memcached.spec.exporter.image ?? image,
    args: [
      `--memcached.address=${statsAddress(memcached.spec, podLayout)}`,
      ...exporterSaslArgs(memcached.spec, podLayout),
      `--web.listen-address=:${exporterPort}`,
    ],
    ...(sasl ? { volumeMounts: [{ name: 'sasl', mountPath: podLayout.saslDir, readOnly: true }] } : {}),
    ports: [{ name: 'metrics', containerPort: exporterPort, protocol: 'TCP' }],
    resources: { requests: { cpu: '5m', memory: '16Mi' }, limits: { memory: '32Mi' } },
    securityContext: restrictedContainer,
    livenessProbe: { httpGet: { path: '/healthz', port: 'metrics' }, periodSeconds: 10, failureThreshold: 3 },
  };
}

const asEnv = (env: Record<string, string>): V1EnvVar[] =>
  Object.entries(env).map(([name, value]) => ({ name, value }));

/** The Secret volumes and the in-memory SASL database volume of spec.tls and spec.sasl. */
function securityVolumes(memcached: Memcached): V1Volume[] {
  const { tls, sasl } = memcached.spec;
  // 0440 with fsGroup (below): readable by the pod's group, the only one its containers run as.
  return [
    ...(tls ? [{ name: 'tls', secret: { secretName: tls.secretName, defaultMode: 0o440 } }] : []),
    ...(sasl
      ? [
          { name: 'sasl-credentials', secret: { secretName: sasl.secretName, defaultMode: 0o440 } },
          // In memory: the database holds the password as written, and must never reach the node's disk.
          { name: 'sasl', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
        ]
      : []),
  ];
}

function memcachedMounts(memcached: Memcached): V1VolumeMount[] {
  const { tls, sasl } = memcached.spec;
  return [
    ...(tls ? [{ name: 'tls', mountPath: podLayout.tlsDir, readOnly: true }] : []),
    ...(sasl ? [{ name: 'sasl', mountPath: podLayout.saslDir, readOnly: true }] : []),
  ];
}

/** Builds the SASL database from the Secret before memcached starts (see sasl-database.ts). */
function saslDatabaseContainer(memcached: Memcached, image: string): V1Container {
  return {
    name: 'sasl-database',
    image,
    command: ['sh', '-c', saslDatabaseScript],
    env: asEnv(saslDatabaseEnv(podLayout)),
    volumeMounts: [
      { name: 'sasl-credentials', mountPath: podLayout.saslCredentialsDir, readOnly: true },
      { name: 'sasl', mountPath: podLayout.saslDir },
    ],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
    securityContext: restrictedContainer,
  };
}

/**
 * The desired StatefulSet for `memcached` (read from the API, so it has a uid). `secrets`: what the
 * reconciler found in the Secrets spec.tls and spec.sasl name.
 */
export function desiredStatefulSet(
  memcached: Memcached,
  images: DefaultImages,
  secrets: ReferencedSecrets = {},
): V1StatefulSet {
  const name = memcached.metadata?.name ?? '';
  const { spec } = memcached;
  const labels = operandLabels(name);
  const tolerations = spec.tolerations as V1Toleration[] | undefined;
  const nodeSelector =
    spec.nodeSelector && Object.keys(spec.nodeSelector).length ? spec.nodeSelector : undefined;
  const affinity =
    spec.affinity && Object.keys(spec.affinity).length
      ? (spec.affinity as V1Affinity)
      : defaultAffinity(name);
  // Each revision spread on its own: during a rollout the old revision's pods are leaving.
  const spread = topologySpreadConstraints(spec.spread, selectorLabels(name), ['controller-revision-hash']);
  const { drainSeconds } = spec.shutdown;
  const image = spec.image ?? images.memcached;
  const volumes = securityVolumes(memcached);
  const mounts = memcachedMounts(memcached);
  const env = asEnv(memcachedEnv(spec, podLayout));
  // A restart request (`kubectl homeostat restart`) changes the template, so the StatefulSet rolls
  // its pods one at a time, each after its drain. None asked: no annotation, so that an upgraded
  // operator rolls nothing.
  const annotations = {
    ...(secrets.revision ? { [secretRevisionAnnotation]: secrets.revision } : {}),
    ...restartAnnotations(memcached),
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: ownedObjectMeta(memcached),
    spec: {
      replicas: spec.size,
      // Pod DNS names <pod>.<Service> come from the headless Service of the same name.
      serviceName: name,
      // Pods hold nothing another pod needs first: start and stop them all at once, and keep
      // scaling to the highest ordinals (what the StatefulSet does whatever the policy).
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
      revisionHistoryLimit: 3,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: {
          labels,
          ...(Object.keys(annotations).length ? { annotations } : {}),
        },
        spec: {
          // memcached exits at once on SIGTERM; the grace period only has to cover the drain.
          terminationGracePeriodSeconds: drainSeconds + 10,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: memcachedUserId,
            runAsGroup: memcachedUserId,
            // Secret files belong to root; fsGroup gives them the pod's group. Only with Secrets,
            // so that pods without them keep the template they had.
            ...(volumes.length ? { fsGroup: memcachedUserId } : {}),
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(spec.sasl ? { initContainers: [saslDatabaseContainer(memcached, image)] } : {}),
          containers: [
            {
              name: 'memcached',
              image,
              command: ['memcached'],
              args: memcachedArgs(spec, secrets, podLayout),
              ...(env.length ? { env } : {}),
              ...(mounts.length ? { volumeMounts: mounts } : {}),
              ports: [{ name: 'memcached', containerPort: spec.port, protocol: 'TCP' }],
              resources: desiredResources(memcached) as V1ResourceRequirements,
              securityContext: restrictedContainer,
              readinessProbe: { tcpSocket: { port: 'memcached' }, periodSeconds: 5, failureThreshold: 2 },
              livenessProbe: {
                tcpSocket: { port: 'memcached' },
                initialDelaySeconds: 10,
                periodSeconds: 10,
                failureThreshold: 3,
              },
              // A stopping pod leaves the Service's endpoints at once, but clients and DNS caches
              // learn it later: memcached keeps answering them for drainSeconds before it stops.
              ...(drainSeconds > 0 ? { lifecycle: { preStop: { sleep: { seconds: drainSeconds } } } } : {}),
            },
            ...(exporterRuns(memcached) ? [exporterContainer(memcached, images.exporter)] : []),
          ],
          ...(volumes.length ? { volumes } : {}),
          ...(nodeSelector ? { nodeSelector } : {}),
          ...(tolerations?.length ? { tolerations } : {}),
          affinity,
          ...(spread ? { topologySpreadConstraints: spread } : {}),
        },
      },
    },
  };
}

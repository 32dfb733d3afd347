// The Deployment that runs one Memcached's pods, as the operator wants it.
import type {
  V1Affinity,
  V1Container,
  V1Deployment,
  V1ResourceRequirements,
  V1Toleration,
} from '@kubernetes/client-node';
import { topologySpreadConstraints } from '@homeostat/operator-kit';
import { exporterPort } from '../api/memcached-schema.ts';
import type { Memcached } from '../api/memcached-types.ts';
import { operandLabels, ownedObjectMeta, selectorLabels } from './operand-labels.ts';

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

/**
 * Whether the metrics sidecar runs: asked for, and not on memcached's own port (the API server
 * refuses that pair; a Memcached stored before the rule existed gets no sidecar rather than two
 * listeners on one port and a Service with a duplicate port).
 */
export function exporterRuns(memcached: Memcached): boolean {
  return memcached.spec.exporter.enabled && memcached.spec.port !== exporterPort;
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
  return {
    name: 'exporter',
    image: memcached.spec.exporter.image ?? image,
    args: [`--memcached.address=127.0.0.1:${memcached.spec.port}`, `--web.listen-address=:${exporterPort}`],
    ports: [{ name: 'metrics', containerPort: exporterPort, protocol: 'TCP' }],
    resources: { requests: { cpu: '5m', memory: '16Mi' }, limits: { memory: '32Mi' } },
    securityContext: restrictedContainer,
    livenessProbe: { httpGet: { path: '/healthz', port: 'metrics' }, periodSeconds: 10, failureThreshold: 3 },
  };
}

/** The desired Deployment for `memcached` (read from the API, so it has a uid). */
export function desiredDeployment(memcached: Memcached, images: DefaultImages): V1Deployment {
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
  // Each ReplicaSet spread on its own: during a rollout the old one's pods are leaving.
  const spread = topologySpreadConstraints(spec.spread, selectorLabels(name), ['pod-template-hash']);
  const { drainSeconds } = spec.shutdown;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: ownedObjectMeta(memcached),
    spec: {
      replicas: spec.size,
      revisionHistoryLimit: 3,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: { labels },
        spec: {
          // memcached exits at once on SIGTERM; the grace period only has to cover the drain.
          terminationGracePeriodSeconds: drainSeconds + 10,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: memcachedUserId,
            runAsGroup: memcachedUserId,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'memcached',
              image: spec.image ?? images.memcached,
              command: ['memcached'],
              // -U 0 turns UDP off: memcached over UDP is a known traffic amplifier.
              args: ['-p', String(spec.port), '-U', '0', '-m', String(spec.memoryLimitMB)],
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
          ...(nodeSelector ? { nodeSelector } : {}),
          ...(tolerations?.length ? { tolerations } : {}),
          affinity,
          ...(spread ? { topologySpreadConstraints: spread } : {}),
        },
      },
    },
  };
}

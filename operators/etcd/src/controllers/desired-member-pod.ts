// The pod of one member: etcd with the flags of its identity and join, its claim mounted, probes on
// the plain-HTTP metrics listener, and Pod Security "restricted".
import { restartAnnotations } from '@homeostat/operator-kit';
import type {
  V1Pod,
  V1PodSecurityContext,
  V1ResourceRequirements,
  V1SecurityContext,
} from '@kubernetes/client-node';
import { topologySpreadConstraints as spreadConstraints } from '@homeostat/operator-kit';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import {
  claimName,
  clusterToken,
  clientPort,
  memberIdAnnotation,
  memberLabels,
  metricsPort,
  nameOf,
  ownedMeta,
  peerPort,
  peerServiceName,
  selectorLabels,
} from './cluster-names.ts';
import type { MemberListen, MemberUrls } from './member-addressing.ts';

/** Where the claim is mounted, and etcd's data directory inside it (a subdirectory etcd makes 0700). */
export const dataMountPath = '/var/lib/etcd';
export const dataDir = `${dataMountPath}/data`;
/** etcd in the upstream image (and the offline stand-in). */
export const etcdBinary = '/usr/local/bin/etcd';
/** A numeric non-root id (Pod Security "restricted"); fsGroup makes the claim writable by it. */
export const etcdUserId = 65532;

/** Pod Security "restricted" for the operator's pods: non-root 65532, which owns the volumes (fsGroup). */
export const restrictedPodSecurity: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: etcdUserId,
  runAsGroup: etcdUserId,
  fsGroup: etcdUserId,
  fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
};
export const restrictedContainerSecurity: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** How the member's etcd joins: alone as a new cluster (the seed), or an existing one. */
export interface MemberJoin {
  readonly initialCluster: string;
  readonly state: 'new' | 'existing';
}

/** Where the TLS Secrets are mounted in a member's pod. */
export const serverTlsDir = '/etc/etcd/tls/server';
export const peerTlsDir = '/etc/etcd/tls/peer';

/** A member's TLS: the Secrets it mounts, and the CN of the only certificates its peer port accepts. */
export interface MemberTls {
  readonly serverSecret: string;
  readonly peerSecret: string;
  readonly peerCommonName: string;
}

/** The flag that limits a member's peer port to peer certificates (pods made before it lack it). */
export const peerAllowedCnFlag = '--peer-cert-allowed-cn';

/** Whether a member pod's etcd accepts only peer certificates on its peer port (TLS on). */
export function acceptsOnlyPeers(pod: V1Pod): boolean {
  const args = pod.spec?.containers.find((c) => c.name === 'etcd')?.args ?? [];
  return args.some((a) => a.startsWith(`${peerAllowedCnFlag}=`));
}

export interface MemberPodInput {
  /** The Secrets members serve clients and peers with; undefined when TLS is off. */
  readonly tls?: MemberTls | undefined;
  readonly member: string;
  readonly image: string;
  readonly urls: MemberUrls;
  readonly listen: MemberListen;
  readonly join: MemberJoin;
  /** The etcd member ID (hex) the pod runs as, or `seed`. */
  readonly memberId: string;
}

/** etcd's command-line flags for a member. */
export function memberFlags(cluster: EtcdCluster, input: MemberPodInput): string[] {
  return [
    `--name=${input.member}`,
    `--data-dir=${dataDir}`,
    `--listen-peer-urls=${input.listen.peer}`,
    `--listen-client-urls=${input.listen.client}`,
    `--listen-metrics-urls=${input.listen.metrics}`,
    `--initial-advertise-peer-urls=${input.urls.peerUrl}`,
    `--advertise-client-urls=${input.urls.clientUrl}`,
    `--initial-cluster=${input.join.initialCluster}`,
    `--initial-cluster-state=${input.join.state}`,
    // Only a new cluster reads it.
    `--initial-cluster-token=${clusterToken(cluster)}`,
    ...(input.tls
      ? [
          // Clients and peers must present a certificate signed by the CA.
          `--cert-file=${serverTlsDir}/tls.crt`,
          `--key-file=${serverTlsDir}/tls.key`,
          `--trusted-ca-file=${serverTlsDir}/ca.crt`,
          '--client-cert-auth=true',
          `--peer-cert-file=${peerTlsDir}/tls.crt`,
          `--peer-key-file=${peerTlsDir}/tls.key`,
          `--peer-trusted-ca-file=${peerTlsDir}/ca.crt`,
          '--peer-client-cert-auth=true',
          // One CA signs the server, peer and client certificates: without this, the client
          // certificate applications get would be accepted on the peer port and could speak raft.
          `${peerAllowedCnFlag}=${input.tls.peerCommonName}`,
          // A peer is who its CA-signed certificate says; etcd would also match the connecting
          // pod's IP against the certificate's names by reverse DNS, which fails for a pod whose
          // record is not published yet (a member just started) and makes the joining member crash.
          '--peer-skip-client-san-verification=true',
        ]
      : []),
  ];
}

/** Requests of a member with none given: enough for a small cluster, no limits (etcd is latency-sensitive). */
export const defaultRequests = { cpu: '100m', memory: '256Mi' };

/** How often the kubelet asks a member's /readyz (its readiness probe's period). */
export const readinessPeriodSeconds = 5;

function resources(cluster: EtcdCluster): V1ResourceRequirements {
  const given = cluster.spec.resources;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  for (const key of ['cpu', 'memory'] as const) {
    const limit = given?.limits?.[key];
    // A limit without a request is the request (as Kubernetes would default it); a default above
    // the limit would be refused.
    requests[key] = given?.requests?.[key] ?? limit ?? defaultRequests[key];
    if (limit) limits[key] = limit;
  }
  return { requests, ...(Object.keys(limits).length ? { limits } : {}) };
}

/** The desired pod of a member. Pods are made once and never updated, except their image (upgrades). */
export function desiredMemberPod(cluster: EtcdCluster, input: MemberPodInput): V1Pod {
  const name = nameOf(cluster);
  const { scheduling } = cluster.spec;
  const topologySpreadConstraints = spreadConstraints(scheduling.spread, selectorLabels(name));
  const probe = (path: string) => ({ httpGet: { path, port: 'metrics', scheme: 'HTTP' } });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...ownedMeta(cluster, input.member, memberLabels(name, input.member)),
      // The restart request the pod was made under: one that differs is behind (rolling-upgrade.ts).
      annotations: { [memberIdAnnotation]: input.memberId, ...restartAnnotations(cluster) },
    },
    spec: {
      hostname: input.member,
      subdomain: peerServiceName(name),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      securityContext: restrictedPodSecurity,
      containers: [
        {
          name: 'etcd',
          image: input.image,
          command: [etcdBinary],
          args: memberFlags(cluster, input),
          ports: [
            { name: 'client', containerPort: clientPort, protocol: 'TCP' },
            { name: 'peer', containerPort: peerPort, protocol: 'TCP' },
            { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
          ],
          resources: resources(cluster),
          // A large database takes a while to open: up to 5 minutes before liveness counts.
          startupProbe: { ...probe('/livez'), periodSeconds: 5, failureThreshold: 60, timeoutSeconds: 5 },
          livenessProbe: { ...probe('/livez'), periodSeconds: 10, failureThreshold: 6, timeoutSeconds: 5 },
          readinessProbe: {
            ...probe('/readyz'),
            periodSeconds: readinessPeriodSeconds,
            failureThreshold: 3,
            timeoutSeconds: 5,
          },
          securityContext: restrictedContainerSecurity,
          volumeMounts: [
            { name: 'data', mountPath: dataMountPath },
            ...(input.tls
              ? [
                  { name: 'server-tls', mountPath: serverTlsDir, readOnly: true },
                  { name: 'peer-tls', mountPath: peerTlsDir, readOnly: true },
                ]
              : []),
          ],
        },
      ],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: claimName(input.member) } },
        ...(input.tls
          ? [
              // Readable by the fsGroup etcd runs in, by no one else.
              { name: 'server-tls', secret: { secretName: input.tls.serverSecret, defaultMode: 0o440 } },
              { name: 'peer-tls', secret: { secretName: input.tls.peerSecret, defaultMode: 0o440 } },
            ]
          : []),
      ],
      ...(topologySpreadConstraints ? { topologySpreadConstraints } : {}),
      ...(scheduling.nodeSelector && Object.keys(scheduling.nodeSelector).length
        ? { nodeSelector: scheduling.nodeSelector }
        : {}),
      ...(scheduling.tolerations?.length ? { tolerations: scheduling.tolerations } : {}),
      ...(scheduling.affinity && Object.keys(scheduling.affinity).length
        ? { affinity: scheduling.affinity }
        : {}),
      ...(scheduling.priorityClassName ? { priorityClassName: scheduling.priorityClassName } : {}),
    },
  };
}

/** The image a member pod runs. */
export function podImage(pod: V1Pod | undefined): string | undefined {
  return pod?.spec?.containers.find((c) => c.name === 'etcd')?.image;
}

// The pod of one PostgreSQL instance, as the operator wants it (ADR 0202).
import { restartAnnotations, restartRequest } from '@homeostat/operator-kit';
import { createHash } from 'node:crypto';
import { basename, dirname } from 'node:path';
import type {
  V1Affinity,
  V1Pod,
  V1PodSpec,
  V1ResourceRequirements,
  V1Toleration,
} from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { postgresPort, readWriteHost, secretNames, serviceNames, tlsSecretNames } from './cluster-names.ts';
import { backupPodParts } from './desired-backup.ts';
import { recoveryPodParts } from './desired-recovery.ts';
import { annotationKeys, clusterSelector, labelKeys, ownedObjectMeta } from './operand-labels.ts';
import { renderParameters } from './postgres-parameters.ts';

/** uid and gid of the `postgres` user in the PostgreSQL images (as in the official image). */
export const postgresUserId = 999;

/** Where the images keep the instance entrypoint (operators/postgres/entrypoint/instance.sh). */
export const entrypointInImage = '/usr/local/bin/homeostat-instance';

/** Where the postgres container keeps its data, sockets and mounted Secrets (the test kubelet maps these). */
export const instancePaths = {
  volume: '/var/lib/postgresql/data',
  // A directory inside the volume: a fresh filesystem's lost+found would make initdb refuse it.
  pgdata: '/var/lib/postgresql/data/pgdata',
  run: '/var/run/postgresql',
  secrets: '/etc/homeostat',
  /** The serving certificate, its key and the CA, from <cluster>-server (PG_TLS_DIR). */
  tls: '/etc/homeostat/tls',
  /** The pod's fence annotation as a file, from the downward API (PG_FENCE_FILE; ADR 0223). */
  fenceFile: '/etc/homeostat/pod/fenced',
} as const;

/** The downward API volume that carries the pod's fence annotation into its containers. */
const podInfoVolume = 'pod-info';

/**
 * A probe command that passes while the instance is fenced on request, else runs `check`: a
 * fenced instance's PostgreSQL is stopped on purpose, and a failing startup or liveness probe
 * would have the kubelet restart the container over and over. Readiness stays plain: a fenced
 * instance is never Ready, so no Service routes to it.
 */
function unlessFenced(check: string): string[] {
  return ['bash', '-c', `[[ "$(cat ${instancePaths.fenceFile} 2>/dev/null)" == true ]] || ${check}`];
}

/**
 * Every pod of a cluster (instances, backups, drills) runs as the image's postgres user, which owns
 * the data and reads the Secrets through the pod's group (restricted Pod Security).
 */
export const postgresPodSecurity = {
  runAsNonRoot: true,
  runAsUser: postgresUserId,
  runAsGroup: postgresUserId,
  fsGroup: postgresUserId,
  fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** Each container of those pods: no privilege, a read-only root filesystem, no capability. */
export const restrictedContainerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/** The volume of the server certificate: a pod that has it serves TLS only. */
export const tlsVolume = 'tls';
const paths = instancePaths;

export type InstanceRole = 'primary' | 'replica';

/**
 * How long a primary that reaches neither the cluster DNS nor another instance keeps running: one
 * whole failing check (the DNS and every peer asked at once, each for up to 1 s; checks 250 ms
 * apart; entrypoint/instance.sh).
 */
export const selfFenceAfterMs = 1000;

/**
 * How soon after a cut a primary has stopped itself, at the latest: the first failing check
 * begins within 250 ms of the cut and lasts 1 s, then the immediate stop; rounded up. A failover
 * promotes no sooner than this after the primary was first seen failing (FailoverPolicy).
 */
export const isolatedPrimaryStopsWithinMs = 2000;

export interface PodInputs {
  /** The image for the cluster's postgresVersion (the spec's `image` wins). */
  readonly image: string;
  /** The role the instance starts in when its pod is created. */
  readonly role: InstanceRole;
  /**
   * Whether an empty volume may become a new primary (initdb): only before the cluster has ever
   * had one. Afterwards an empty primary volume means lost data, which the replicas still hold.
   */
  readonly initdb: 'allowed' | 'refused';
  /**
   * The volume may hold data an earlier cluster of this name left (`storage.retention: Retain`)
   * and no primary is chosen yet: the entrypoint starts that data as a standby, as it is (ADR 0211).
   */
  readonly retained?: boolean;
  /** Fenced on request when created: PostgreSQL does not start in it (ADR 0223). */
  readonly fenced?: boolean;
}

function affinityOf(cluster: PostgresCluster): V1Affinity | undefined {
  const { antiAffinity, topologyKey } = cluster.spec.scheduling;
  const term = { topologyKey, labelSelector: { matchLabels: clusterSelector(cluster.metadata?.name ?? '') } };
  if (antiAffinity === 'required') {
    return { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
  }
  if (antiAffinity === 'preferred') {
    return {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
      },
    };
  }
  return undefined;
}

function resourcesOf(cluster: PostgresCluster): V1ResourceRequirements | undefined {
  const { resources } = cluster.spec;
  if (!resources) return undefined;
  const defined = (list: Record<string, string | undefined> | undefined) =>
    list && Object.keys(list).length
      ? Object.fromEntries(Object.entries(list).filter((e): e is [string, string] => e[1] !== undefined))
      : undefined;
  const requests = defined(resources.requests);
  const limits = defined(resources.limits);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

const secretVolume = (name: string, secretName: string, items: string[]) => ({
  name,
  // 0440 with the pod's fsGroup: the postgres user reads it, nobody else in the pod does.
  secret: { secretName, defaultMode: 0o440, items: items.map((key) => ({ key, path: key })) },
});

/** The pod spec, without anything that differs between instances (hashed to detect changes). */
export function instancePodSpec(cluster: PostgresCluster, image: string): V1PodSpec {
  const name = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? 'default';
  const { spec } = cluster;
  const secrets = secretNames(name);
  const parameters = renderParameters(cluster);
  const backup = backupPodParts(cluster, {
    pgdata: paths.pgdata,
    run: paths.run,
    port: postgresPort,
    tls: paths.tls,
  });
  const affinity = affinityOf(cluster);
  const resources = resourcesOf(cluster);
  const tolerations = spec.scheduling.tolerations as V1Toleration[] | undefined;
  const nodeSelector = spec.scheduling.nodeSelector;
  const restricted = restrictedContainerSecurity;
  return {
    subdomain: serviceNames(name).instances,
    // The self-fence container stops a cut-off primary's postgres (pg_ctl signals its process).
    shareProcessNamespace: true,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 30,
    securityContext: postgresPodSecurity,
    containers: [
      {
        name: 'postgres',
        image: spec.image ?? image,
        command: [entrypointInImage],
        // The entrypoint writes why it stopped here (PG_TERMINATION_LOG's default) and the operator
        // reports it (instance-failures.ts). File, not FallbackToLogsOnError: the status shows what
        // the entrypoint chose to say, never the tail of a log.
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        env: [
          { name: 'PGDATA', value: paths.pgdata },
          { name: 'PGPORT', value: String(postgresPort) },
          { name: 'PG_BIN', value: `/usr/lib/postgresql/${spec.postgresVersion}/bin` },
          { name: 'PG_RUN_DIR', value: paths.run },
          { name: 'INSTANCE_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          // Resolved by the kubelet at every container start: the operator changes the annotation
          // when the instance's role changes, and the next start follows it (ADR 0202).
          {
            name: 'INSTANCE_ROLE',
            valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${annotationKeys.instanceRole}']` } },
          },
          { name: 'PRIMARY_HOST', value: readWriteHost(name, namespace) },
          { name: 'PRIMARY_PORT', value: String(postgresPort) },
          { name: 'PG_REPLICATION_SECRET_DIR', value: `${paths.secrets}/replication` },
          { name: 'PG_SUPERUSER_SECRET_DIR', value: `${paths.secrets}/operator` },
          { name: 'PG_APP_SECRET_DIR', value: `${paths.secrets}/app` },
          { name: 'PG_APP_DATABASE', value: spec.bootstrap.database },
          { name: 'PG_TLS_DIR', value: paths.tls },
          { name: 'PG_FENCE_FILE', value: paths.fenceFile },
          ...(parameters ? [{ name: 'PG_PARAMETERS', value: parameters }] : []),
          ...backup.env,
        ],
        ports: [{ name: 'postgresql', containerPort: postgresPort, protocol: 'TCP' }, ...backup.ports],
        ...(resources ? { resources } : {}),
        // A clone of a large primary runs before postgres listens: the startup probe gives it an hour.
        // Both probe every second: a primary postgres the kubelet restarts in place takes writes
        // through -rw only once the pod is Ready again, and the readiness probe waits for the
        // startup probe (at 5 s and 2 s, a SIGKILL cost writes 4.9 to 6.3 s; the budget is 5 s).
        startupProbe: {
          exec: { command: unlessFenced(`exec pg_isready -q -h ${paths.run} -p ${postgresPort}`) },
          periodSeconds: 1,
          failureThreshold: 3600,
        },
        readinessProbe: {
          exec: { command: ['pg_isready', '-q', '-h', paths.run, '-p', String(postgresPort)] },
          periodSeconds: 1,
          failureThreshold: 2,
        },
        livenessProbe: {
          // Whether the postmaster accepts a TCP connection at all, once there is one: an instance
          // unfenced starts in the same container, after its startup probe, and a replica's start
          // may take a while before PostgreSQL listens.
          exec: {
            command: unlessFenced(
              `[[ ! -e ${paths.pgdata}/postmaster.pid ]] || : >/dev/tcp/127.0.0.1/${postgresPort}`,
            ),
          },
          periodSeconds: 10,
          failureThreshold: 3,
        },
        lifecycle: {
          // Fast shutdown: sessions end at once and the last WAL reaches the standbys (a smart
          // shutdown would wait for every client to leave).
          preStop: { exec: { command: ['bash', '-c', 'pg_ctl stop -D "$PGDATA" -m fast -w -t 25'] } },
        },
        securityContext: restricted,
        volumeMounts: [
          { name: 'data', mountPath: paths.volume },
          { name: 'run', mountPath: paths.run },
          { name: 'tmp', mountPath: '/tmp' },
          { name: 'replication', mountPath: `${paths.secrets}/replication`, readOnly: true },
          { name: 'operator', mountPath: `${paths.secrets}/operator`, readOnly: true },
          { name: 'app', mountPath: `${paths.secrets}/app`, readOnly: true },
          { name: tlsVolume, mountPath: paths.tls, readOnly: true },
          { name: podInfoVolume, mountPath: dirname(paths.fenceFile), readOnly: true },
          ...backup.mounts,
        ],
      },
      {
        // A primary cut off from the cluster stops itself (entrypoint/instance.sh, self_fence_watch).
        name: 'self-fence',
        image: spec.image ?? image,
        command: [entrypointInImage, 'self-fence'],
        env: [
          { name: 'PGDATA', value: paths.pgdata },
          { name: 'PGPORT', value: String(postgresPort) },
          { name: 'PG_BIN', value: `/usr/lib/postgresql/${spec.postgresVersion}/bin` },
          { name: 'PG_RUN_DIR', value: paths.run },
          { name: 'PG_PEERS_HOST', value: `${serviceNames(name).instances}.${namespace}.svc` },
          { name: 'PG_SELF_FENCE_MS', value: String(selfFenceAfterMs) },
          { name: 'PG_FENCE_FILE', value: paths.fenceFile },
        ],
        resources: { requests: { cpu: '5m', memory: '8Mi' }, limits: { memory: '32Mi' } },
        securityContext: restricted,
        volumeMounts: [
          { name: 'data', mountPath: paths.volume },
          { name: 'run', mountPath: paths.run },
          { name: 'tmp', mountPath: '/tmp' },
          { name: podInfoVolume, mountPath: dirname(paths.fenceFile), readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: 'run', emptyDir: {} },
      { name: 'tmp', emptyDir: {} },
      secretVolume('replication', secrets.replication, ['username', 'password']),
      secretVolume('operator', secrets.operator, ['username', 'password']),
      secretVolume('app', secrets.app, ['username', 'password']),
      // 0440, root's with the pod's group: PostgreSQL accepts a key file its owner is root of when
      // no one outside that group may read it.
      secretVolume(tlsVolume, tlsSecretNames(name).server, ['tls.crt', 'tls.key', 'ca.crt']),
      {
        // Updated in place when the annotation changes (the kubelet re-mounts it at each sync of
        // the pod, which an annotation change starts): how a fence reaches a running pod.
        name: podInfoVolume,
        downwardAPI: {
          items: [
            {
              path: basename(paths.fenceFile),
              fieldRef: { fieldPath: `metadata.annotations['${annotationKeys.fenced}']` },
            },
          ],
        },
      },
      ...backup.volumes,
    ],
    ...(affinity ? { affinity } : {}),
    ...(nodeSelector && Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(tolerations?.length ? { tolerations } : {}),
    ...(spec.scheduling.priorityClassName ? { priorityClassName: spec.scheduling.priorityClassName } : {}),
  };
}

/**
 * A short hash of what the pod spec should be: a live pod with another hash needs a restart. A
 * restart request (`restartedAt`, homeostat.dev/restartedAt on the cluster) is part of it only when
 * there is one, so that the hashes of pods made before requests existed stay what they were.
 */
export function specHash(spec: V1PodSpec, restartedAt?: string): string {
  const hash = createHash('sha256').update(JSON.stringify(spec));
  if (restartedAt !== undefined) hash.update(`\nrestartedAt=${restartedAt}`);
  return hash.digest('hex').slice(0, 16);
}

/** The desired pod of instance `instance` (its claim has the same name). */
export function desiredInstancePod(cluster: PostgresCluster, instance: string, inputs: PodInputs): V1Pod {
  const shared = instancePodSpec(cluster, inputs.image);
  const meta = ownedObjectMeta(cluster, instance);
  // Only a pod that may bootstrap the cluster restores it from a backup.
  const recovery =
    inputs.initdb === 'allowed' && inputs.role === 'primary'
      ? recoveryPodParts(cluster, paths)
      : { env: [], volumes: [], mounts: [] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      labels: { ...meta.labels, [labelKeys.instance]: instance },
      annotations: {
        [annotationKeys.instanceRole]: inputs.role,
        [annotationKeys.specHash]: specHash(shared, restartRequest(cluster)),
        // What `kubectl homeostat restart` waits for: every pod made under its request.
        ...restartAnnotations(cluster),
        ...(inputs.fenced ? { [annotationKeys.fenced]: 'true' } : {}),
      },
    },
    spec: {
      ...shared,
      // Not part of the hash: they change once the cluster is bootstrapped, which must not restart
      // the pods that already run; they only matter when a pod is created.
      containers: (shared.containers ?? []).map((c) =>
        c.name === 'postgres'
          ? {
              ...c,
              env: [
                ...(c.env ?? []),
                { name: 'PG_INITDB', value: inputs.initdb },
                ...(inputs.retained ? [{ name: 'PG_RETAINED', value: 'true' }] : []),
                ...recovery.env,
              ],
              volumeMounts: [...(c.volumeMounts ?? []), ...recovery.mounts],
            }
          : c,
      ),
      hostname: instance,
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: instance } },
        ...(shared.volumes ?? []),
        ...recovery.volumes,
      ],
    },
  };
}

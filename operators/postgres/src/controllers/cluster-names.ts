// The names of everything one PostgreSQLCluster is made of, derived from its name alone.

/** Instance `n` of cluster `cluster`: its pod, its claim, its replication slot's suffix. */
export function instanceName(cluster: string, ordinal: number): string {
  return `${cluster}-${ordinal}`;
}

/** The ordinal of an instance of `cluster`, or undefined when `name` is not one. */
export function ordinalOf(cluster: string, name: string): number | undefined {
  const prefix = `${cluster}-`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/** The instance names of a cluster of `instances` instances, in ordinal order. */
export function instanceNames(cluster: string, instances: number): string[] {
  return Array.from({ length: instances }, (_, n) => instanceName(cluster, n));
}

/** The Services: read-write (the primary), read-only (the replicas), any instance, and the headless one for pod DNS. */
export const serviceNames = (cluster: string) => ({
  readWrite: `${cluster}-rw`,
  readOnly: `${cluster}-ro`,
  any: `${cluster}-r`,
  instances: `${cluster}-instances`,
});

/** The Secrets: the application's, the superuser's (when enabled), replication's and the operator's own. */
export const secretNames = (cluster: string) => ({
  app: `${cluster}-app`,
  superuser: `${cluster}-superuser`,
  replication: `${cluster}-replication`,
  operator: `${cluster}-operator`,
});

/**
 * The TLS Secrets: the cluster's CA (certificate and key), the instances' serving certificate, and
 * the client certificate of its backup pods (the only client the instances' pgBackRest servers take).
 */
export const tlsSecretNames = (cluster: string) => ({
  ca: `${cluster}-ca`,
  server: `${cluster}-server`,
  backupClient: `${cluster}-backup-client`,
});

/** The PodDisruptionBudgets: one that keeps the primary, one that lets one replica go at a time. */
export const disruptionBudgetNames = (cluster: string) => ({
  primary: `${cluster}-primary`,
  replicas: `${cluster}-replicas`,
});

/** The DNS name an instance is reached at (through the headless Service), from inside the cluster. */
export function instanceHost(cluster: string, namespace: string, instance: string): string {
  return `${instance}.${serviceNames(cluster).instances}.${namespace}.svc`;
}

/** The read-write Service's DNS name: where applications and starting replicas find the primary. */
export function readWriteHost(cluster: string, namespace: string): string {
  return `${serviceNames(cluster).readWrite}.${namespace}.svc`;
}

/** The port every instance listens on and every Service exposes. */
export const postgresPort = 5432;

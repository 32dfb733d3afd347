// The Secrets the operator generates for a cluster. Passwords come from node:crypto, are written
// once (a Secret that exists is never regenerated: the database holds the same password) and never
// reach a log, an Event or the status.
import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { operatorUser, replicationUser, superuserName } from '../api/operator-roles.ts';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { postgresPort, readWriteHost, secretNames } from './cluster-names.ts';
import { ownedObjectMeta } from './operand-labels.ts';

/** 192 random bits, URL-safe base64: nothing in it needs quoting in a URI or a pgpass line. */
export function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

export { operatorUser, replicationUser, superuserName } from '../api/operator-roles.ts';

function basicAuth(
  cluster: PostgresCluster,
  name: string,
  component: string,
  data: Record<string, string>,
): V1Secret {
  const { ownerReferences, ...meta } = ownedObjectMeta(cluster, name, component);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    // Retained with the claims: the data they hold logs in with these passwords (ADR 0211).
    metadata: cluster.spec.storage.retention === 'Retain' ? meta : { ...meta, ownerReferences },
    type: 'kubernetes.io/basic-auth',
    stringData: data,
  };
}

/**
 * username, password, host, port, dbname, uri and a pgpass line: what a client needs to connect;
 * with the cluster's CA (`ca.crt`) the uri asks for verify-full, which a client meets by pointing
 * sslrootcert (PGSSLROOTCERT) at that file (ADR 0214).
 */
function connectionData(
  cluster: PostgresCluster,
  username: string,
  password: string,
  dbname: string,
  ca: string | undefined,
) {
  const host = readWriteHost(cluster.metadata?.name ?? '', cluster.metadata?.namespace ?? 'default');
  const port = String(postgresPort);
  return {
    username,
    password,
    host,
    port,
    dbname,
    uri: `postgresql://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(dbname)}${ca ? '?sslmode=verify-full' : ''}`,
    pgpass: `${host}:${port}:${dbname}:${username}:${password}\n`,
    ...(ca ? { 'ca.crt': ca } : {}),
  };
}

/** `<cluster>-app`: the application role (bootstrap.owner) and database, through the -rw Service. */
export function appSecret(cluster: PostgresCluster, password: string, ca?: string): V1Secret {
  const { database, owner } = cluster.spec.bootstrap;
  return basicAuth(
    cluster,
    secretNames(cluster.metadata?.name ?? '').app,
    'credentials',
    connectionData(cluster, owner, password, database, ca),
  );
}

/** `<cluster>-superuser`: the `postgres` superuser, only while `superuserAccess` is on. */
export function superuserSecret(cluster: PostgresCluster, password: string, ca?: string): V1Secret {
  return basicAuth(
    cluster,
    secretNames(cluster.metadata?.name ?? '').superuser,
    'credentials',
    connectionData(cluster, superuserName, password, 'postgres', ca),
  );
}

/** The Secrets a client connects with, which carry the cluster's CA (`ca.crt`). */
export const clientSecretNames = (cluster: string) => [
  secretNames(cluster).app,
  secretNames(cluster).superuser,
];

/** `<cluster>-replication`: the role replicas stream and pg_rewind with. */
export function replicationSecret(cluster: PostgresCluster, password: string): V1Secret {
  return basicAuth(cluster, secretNames(cluster.metadata?.name ?? '').replication, 'credentials', {
    username: replicationUser,
    password,
  });
}

/** `<cluster>-operator`: the superuser initdb creates, which the operator observes and promotes with. */
export function operatorSecret(cluster: PostgresCluster, password: string): V1Secret {
  return basicAuth(cluster, secretNames(cluster.metadata?.name ?? '').operator, 'credentials', {
    username: operatorUser,
    password,
  });
}

/** The Secrets the cluster should have now, each with a fresh password (used only to create one that is missing). */
export function desiredSecrets(
  cluster: PostgresCluster,
  password: () => string = newPassword,
  ca?: string,
): V1Secret[] {
  return [
    appSecret(cluster, password(), ca),
    replicationSecret(cluster, password()),
    operatorSecret(cluster, password()),
    ...(cluster.spec.superuserAccess ? [superuserSecret(cluster, password(), ca)] : []),
  ];
}

// No password anywhere, with a live cluster: a real kube-apiserver + etcd, the operator, and a real
// PostgreSQL process as its pod (test-support/pod-processes.ts, with the cluster's Secrets mounted)
// running with every statement logged. The roles the entrypoint bootstraps and the superuser the
// operator grants login to all log in with their Secrets' passwords, and no password is in the
// server's log, the operator's log, an Event or the status.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection, type Credentials } from '../instance/instance.ts';
import { postgresBinDir } from '../test-support/postgres-processes.ts';
import { podClusterSuite } from '../test-support/pod-cluster.ts';
import { secretNames, tlsSecretNames } from './cluster-names.ts';
import { operandLabels } from './operand-labels.ts';

describe('no password in any log, with statement logging on: real kube-apiserver, real PostgreSQL as pods', () => {
  const { client, namespace, cluster, pods, lines, slow } = podClusterSuite({
    namespace: `pg-sec-${process.pid}`,
    cluster: 'sec',
    spec: {
      instances: 1,
      superuserAccess: true,
      bootstrap: { database: 'shop', owner: 'shopper' },
      postgresql: {
        parameters: {
          log_statement: 'all',
          log_min_duration_statement: '0',
          log_min_error_statement: 'debug5',
          log_min_messages: 'info',
        },
      },
    },
  });

  const credentials = async (name: string): Promise<Credentials> => {
    const data = (await client.get(builtin.secrets, name, namespace)).data ?? {};
    const field = (key: string) => Buffer.from(data[key] ?? '', 'base64').toString();
    return { user: field('username'), password: field('password') };
  };
  const logsIn = (c: Credentials) =>
    withConnection(pods.endpoint(`${cluster}-0`), c, defaultConnectOptions, async (client) => {
      await client.query('SELECT 1');
      return true;
    }).catch(() => false);

  it('every role the operator and the entrypoint set logs in with its Secret, and no password is in any log', async () => {
    const names = secretNames(cluster);
    await waitUntil(
      'the superuser Secret, and its login',
      async () =>
        (await client.find(builtin.secrets, names.superuser, namespace)) !== undefined &&
        (await logsIn(await credentials(names.superuser))),
      slow,
    );
    const secrets = await Promise.all(
      [names.app, names.replication, names.operator, names.superuser].map(credentials),
    );
    for (const c of secrets) expect(await logsIn(c), `${c.user} logs in`).toBe(true);
    expect(secrets.map((c) => c.user)).toEqual(['shopper', 'streaming_replica', 'homeostat', 'postgres']);

    const serverLog = readFileSync(pods.instance(`${cluster}-0`).logFile, 'utf8');
    const status = (await client.get(postgresClusters, cluster, namespace)).status;
    const events = (await client.list(builtin.events, { namespace })).items;
    const operatorLog = JSON.stringify(lines);
    for (const { user, password } of secrets) {
      expect(serverLog, `${user}'s password in the server log`).not.toContain(password);
      expect(operatorLog, `${user}'s password in the operator log`).not.toContain(password);
      expect(JSON.stringify([events, status]), `${user}'s password in Events or status`).not.toContain(
        password,
      );
    }
    // Statement logging was on, and the superuser's statement went through it.
    expect(serverLog).toMatch(
      /statement: CREATE ROLE "postgres" WITH SUPERUSER LOGIN PASSWORD 'SCRAM-SHA-256\$/,
    );
  });

  it("publishes a uri that connects with verify-full against the CA it carries; the CA Secret is the cluster's", async () => {
    const decode = (data: Record<string, string> | undefined, key: string) =>
      Buffer.from(data?.[key] ?? '', 'base64').toString();
    const caSecret = await client.get(builtin.secrets, tlsSecretNames(cluster).ca, namespace);
    expect(Object.keys(caSecret.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key']);
    expect(caSecret.metadata?.labels).toEqual(operandLabels(cluster, 'tls'));
    expect(caSecret.metadata?.ownerReferences?.[0]?.controller).toBe(true);
    const app = (await client.get(builtin.secrets, secretNames(cluster).app, namespace)).data;
    expect(decode(app, 'ca.crt')).toBe(decode(caSecret.data, 'ca.crt'));
    const uri = new URL(decode(app, 'uri'));
    expect(uri.hostname).toBe(`${cluster}-rw.${namespace}.svc`);
    expect(uri.searchParams.get('sslmode')).toBe('verify-full');

    // libpq as an application runs it: the uri as given, the Service's name checked against the
    // certificate, the CA from the Secret; only the address is the test kubelet's loopback proxy.
    const dir = mkdtempSync(join(tmpdir(), 'pg-ca-'));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, decode(app, 'ca.crt'));
    uri.port = String(pods.readWritePort);
    const psql = (rootCert: string) =>
      promisify(execFile)(
        join(postgresBinDir, 'psql'),
        [uri.toString(), '-qAtX', '-c', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'],
        {
          env: {
            PATH: '/usr/bin:/bin',
            PGHOSTADDR: '127.0.0.1',
            PGSSLROOTCERT: rootCert,
            PGCONNECT_TIMEOUT: '3',
          },
        },
      );
    try {
      let answer = '';
      await waitUntil(
        'the application connects through -rw with verify-full',
        async () =>
          (answer = await psql(caFile)
            .then((r) => r.stdout.trim())
            .catch(() => '')) !== '',
        slow,
      );
      expect(answer).toBe('t');
      // Without the CA file the same uri is refused: verify-full never connects unverified.
      await expect(psql(join(dir, 'missing.crt'))).rejects.toThrow(/root certificate file .* does not exist/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

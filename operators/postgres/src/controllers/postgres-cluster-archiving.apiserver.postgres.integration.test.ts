// Continuous WAL archiving end to end (spec.backup): a real kube-apiserver + etcd, the operator,
// a real PostgreSQL process per pod, a primary and a replica (test-support/pod-processes.ts runs
// the production entrypoint with the pod's environment, its Secret references resolved), and
// pgBackRest pushing each finished segment to a real S3 server (versitygw over TLS, its CA from a
// Secret). Then a wrong secret key in the credentials Secret: archiving fails, the status and one
// Warning Event name the segment, and no credential value is in the status, an Event, the
// operator's log or the instances' logs (pgBackRest quotes the S3 server's error body, which names
// the access key id).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import type { S3TestServer } from '@homeostat/testing/s3';
import { builtin, findCondition } from '@homeostat/reconcile';
import { conditionTypes } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { startS3Repository, type S3Repository } from '../test-support/s3-repository.ts';
import { podClusterSuite } from '../test-support/pod-cluster.ts';

const cluster = 'ledger';
const instance = 'ledger-0';
const bucket = 'pg-archive';
const prefix = 'clusters/ledger/';

/** Every object key under the cluster's WAL archive in the bucket (versitygw keeps objects as files). */
function archivedObjects(s3: S3TestServer): string[] {
  const root = join(s3.rootDir, bucket, prefix, 'archive', cluster);
  const walk = (dir: string): string[] =>
    existsSync(dir)
      ? readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(join(dir, e.name)) : [e.name],
        )
      : [];
  return walk(root);
}

describe('continuous WAL archiving to S3: real kube-apiserver, real PostgreSQL and pgBackRest, real S3', () => {
  let repository: S3Repository;
  let s3: S3TestServer;
  const { client, namespace, pods, lines, get, events, slow } = podClusterSuite({
    namespace: `pg-archive-${process.pid}`,
    cluster,
    setUp: async ({ client, namespace }) => {
      repository = await startS3Repository(client, namespace, bucket);
      s3 = repository.s3;
    },
    spec: () => ({
      instances: 2,
      // The primary's restart (below) must not start a failover: the test is about its archiving.
      failoverDelay: '60s',
      backup: {
        destination: { s3: repository.destination(prefix) },
        archiveTimeout: '60s',
      },
    }),
    tearDown: () => repository?.stop() ?? Promise.resolve(),
  });

  const sql = <T extends Record<string, unknown>>(text: string) =>
    withConnection(
      pods.endpoint(instance),
      pods.bed.superuser,
      defaultConnectOptions,
      async (c) => (await c.query<T>(text)).rows,
    );
  /** Closes the current segment (after a write, so it holds one) and returns its name. */
  const switchWal = async () => {
    await sql(`INSERT INTO entries(note) VALUES ('entry ' || clock_timestamp())`);
    const [row] = await sql<{ walfile: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS walfile');
    return row?.walfile ?? '';
  };
  const archiving = async () =>
    findCondition((await get()).status?.conditions, conditionTypes.continuousArchiving);

  it('archives each finished segment into the bucket, and says so in the status', async () => {
    await waitUntil('the primary up', async () => (await get()).status?.currentPrimary === instance, slow);
    // Every instance creates (or checks) the stanza from its own pg_control, so a replica
    // promoted later has done it too.
    for (const name of [instance, `${cluster}-1`]) {
      await waitUntil(
        `the stanza created or checked by ${name}'s entrypoint`,
        async () =>
          pods.bed.entrypointLog(name).some((l) => l.includes(`stanza ${cluster} is in the repository`)),
        slow,
      );
    }
    const settings = await sql<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('archive_mode', 'archive_timeout') ORDER BY name",
    );
    expect(settings).toEqual([
      { name: 'archive_mode', setting: 'on' },
      { name: 'archive_timeout', setting: '60' },
    ]);
    await sql('CREATE TABLE entries(id bigserial PRIMARY KEY, note text)');
    const segment = await switchWal();
    await waitUntil(
      `segment ${segment} in the bucket`,
      async () => archivedObjects(s3).some((key) => key.startsWith(`${segment}-`)),
      slow,
    );
    await waitUntil(
      'ContinuousArchiving True with the segment in status.backup',
      async () => {
        const status = (await get()).status;
        const condition = findCondition(status?.conditions, conditionTypes.continuousArchiving);
        return condition?.status === 'True' && (status?.backup?.lastArchivedWal ?? '') >= segment;
      },
      slow,
    );
    const condition = await archiving();
    expect(condition).toMatchObject({ reason: 'Archiving' });
    expect(condition?.message).toContain(`s3://${bucket}/${prefix}`);
    expect((await get()).status?.backup?.lastArchivedTime).toMatch(/^\d{4}-\d\d-\d\dT/);
  }, 200_000);

  it('a wrong secret key: ContinuousArchiving False naming the segment, one Warning Event, no credential anywhere', async () => {
    const wrongSecret = `wrong${s3.secretAccessKey.slice(5)}x`;
    await repository.setSecretKey(wrongSecret);
    // A container restart takes the Secret's new value, as a kubelet resolves it at each start.
    await pods.instance(instance).kill9();
    await waitUntil(
      'the instance back',
      async () => (await sql<{ one: number }>('SELECT 1 AS one').catch(() => []))[0]?.one === 1,
      slow,
    );
    const segment = await switchWal();
    await waitUntil(
      'ContinuousArchiving False: ArchivingFailing',
      async () => (await archiving())?.reason === 'ArchivingFailing',
      slow,
    );
    const condition = await archiving();
    expect(condition?.status).toBe('False');
    expect(condition?.message).toContain(`fails to archive WAL segment ${segment}`);
    expect((await get()).status?.backup).toMatchObject({ failingWal: segment });
    // The archiver keeps retrying the same segment; the Event is recorded once for it.
    await consistently(
      'one ArchivingFailing Event',
      async () => (await events('ArchivingFailing')).length <= 1,
      {
        forMs: 5000,
        intervalMs: 500,
      },
    );
    const warnings = await events('ArchivingFailing');
    expect(warnings.map((e) => e.type)).toEqual(['Warning']);
    expect(warnings[0]?.note).toContain(segment);
    expect(archivedObjects(s3).some((key) => key.startsWith(`${segment}-`))).toBe(false);

    // The entrypoint's stanza check failed too, and said why without the key.
    expect(
      pods.bed.entrypointLog(instance).some((l) => l.includes('stanza-create failed: ERROR: [039]')),
    ).toBe(true);
    const everything = JSON.stringify([
      (await get()).status,
      (await client.list(builtin.events, { namespace })).items,
      lines,
      pods.bed.allLogs(),
    ]);
    for (const value of [s3.accessKeyId, s3.secretAccessKey, wrongSecret]) {
      expect(everything.includes(value), 'a credential value in status, Events or logs').toBe(false);
    }
  }, 200_000);
});

// What spec.backup puts in the instance pod: the pgBackRest configuration and archive settings for
// the entrypoint, the credentials only as references to the user's Secret, the CA mounted.
import { describe, expect, it } from 'vitest';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import { archiveTimeoutSeconds, backupPodParts } from './desired-backup.ts';
import { desiredInstancePod, instancePodSpec, specHash } from './desired-pod.ts';

const s3 = {
  bucket: 'pg-backups',
  prefix: 'prod/orders/',
  endpoint: 'https://s3.internal:9000',
  forcePathStyle: true,
  credentialsSecretName: 's3-credentials',
  ca: { secretName: 's3-ca', key: 'ca.pem' },
};
const withBackup = storedCluster('orders', 'shop', {
  backup: { destination: { s3 }, archiveTimeout: '90s' },
});
const without = storedCluster('orders', 'shop');
const paths = { pgdata: '/data/pgdata', run: '/run/pg', port: 5432, tls: '/etc/homeostat/tls' };

describe('the instance pod with spec.backup', () => {
  const parts = backupPodParts(withBackup, paths);
  const env = new Map(parts.env.map((e) => [e.name, e]));

  it('hands the entrypoint the rendered configuration, archive_command and archive_timeout', () => {
    const config = env.get('PG_BACKREST_CONFIG')?.value ?? '';
    expect(config).toContain('repo1-s3-bucket=pg-backups\n');
    expect(config).toContain('repo1-path=/prod/orders\n');
    expect(config).toContain('repo1-storage-ca-file=/etc/homeostat/backup-ca/ca.pem\n');
    expect(config).toContain('[orders]\npg1-path=/data/pgdata\n');
    // The server's archive_command output goes to its log unredacted: the tool prints nothing there.
    expect(config).toContain('log-level-console=off\n');
    expect(env.get('PG_BACKREST_CONFIG_FILE')?.value).toBe('/run/pg/pgbackrest/pgbackrest.conf');
    expect(env.get('PG_BACKREST_STANZA')?.value).toBe('orders');
    expect(env.get('PG_ARCHIVE_COMMAND')?.value).toBe(
      'pgbackrest --config=/run/pg/pgbackrest/pgbackrest.conf --stanza=orders archive-push %p',
    );
    expect(env.get('PG_ARCHIVE_TIMEOUT')?.value).toBe('90');
  });

  it('takes the credentials from the user Secret by reference only, the session token optional', () => {
    expect(parts.env.filter((e) => e.name.startsWith('PGBACKREST_'))).toEqual([
      {
        name: 'PGBACKREST_REPO1_S3_KEY',
        valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'accessKeyId' } },
      },
      {
        name: 'PGBACKREST_REPO1_S3_KEY_SECRET',
        valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'secretAccessKey' } },
      },
      {
        name: 'PGBACKREST_REPO1_S3_TOKEN',
        valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'sessionToken', optional: true } },
      },
    ]);
  });

  it('mounts the CA key read-only, and nothing when there is no CA', () => {
    expect(parts.volumes).toEqual([
      {
        name: 'backup-ca',
        secret: { secretName: 's3-ca', defaultMode: 0o444, items: [{ key: 'ca.pem', path: 'ca.pem' }] },
      },
    ]);
    expect(parts.mounts).toEqual([
      { name: 'backup-ca', mountPath: '/etc/homeostat/backup-ca', readOnly: true },
    ]);
    const noCa = storedCluster('orders', 'shop', {
      backup: { destination: { s3: { ...s3, ca: undefined } } },
    });
    const plain = backupPodParts(noCa, paths);
    expect(plain.volumes).toEqual([]);
    expect(plain.env.find((e) => e.name === 'PG_BACKREST_CONFIG')?.value).not.toContain(
      'repo1-storage-ca-file',
    );
    expect(plain.env.find((e) => e.name === 'PG_ARCHIVE_TIMEOUT')?.value).toBe('300');
  });

  it('is absent without spec.backup, and turning it on changes the pod hash (the pods restart with it)', () => {
    expect(backupPodParts(without, paths)).toEqual({ env: [], volumes: [], mounts: [], ports: [] });
    const names = (cluster: typeof without) =>
      (
        desiredInstancePod(cluster, 'orders-0', { image: 'i', role: 'primary', initdb: 'allowed' }).spec
          ?.containers[0]?.env ?? []
      ).map((e) => e.name);
    expect(names(without).filter((n) => /BACKREST|ARCHIVE/.test(n))).toEqual([]);
    expect(names(withBackup)).toContain('PG_ARCHIVE_COMMAND');
    expect(specHash(instancePodSpec(withBackup, 'i'))).not.toBe(specHash(instancePodSpec(without, 'i')));
  });
});

describe('archiveTimeout', () => {
  it('becomes seconds, the unit PostgreSQL reads a bare number in', () => {
    expect(archiveTimeoutSeconds('30s')).toBe(30);
    expect(archiveTimeoutSeconds('5m')).toBe(300);
    expect(archiveTimeoutSeconds('1h')).toBe(3600);
    expect(() => archiveTimeoutSeconds('5min')).toThrow(/not a number of s, m or h/);
  });
});

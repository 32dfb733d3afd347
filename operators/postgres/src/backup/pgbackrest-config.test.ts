import { describe, expect, it } from 'vitest';
import {
  credentialEnvironment,
  renderCredentialsConfig,
  renderPgBackRestConfig,
  renderRecoveryConfig,
  renderRepositoryHostConfig,
} from './pgbackrest-config.ts';
import { archiveCommand, confLine, restoreCommand } from './wal-commands.ts';

const destination = {
  bucket: 'backups',
  prefix: 'prod/pg/',
  endpoint: 'https://s3.internal:9000',
  region: 'eu-west-1',
  forcePathStyle: true,
  caFile: '/etc/homeostat/s3-ca/ca.crt',
};
const instance = {
  dataDir: '/var/lib/postgresql/data',
  port: 5432,
  socketDir: '/run/postgresql',
  user: 'postgres',
};
const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 's3cr3t/with+chars', sessionToken: 'tok' };

describe('pgBackRest configuration', () => {
  it('renders the repository, the stanza and no credential', () => {
    const text = renderPgBackRestConfig({
      stanza: 'cluster-a',
      destination,
      instance,
      workDir: '/run/pgbackrest',
    });
    expect(text).toContain('repo1-s3-endpoint=s3.internal\nrepo1-storage-port=9000\n');
    expect(text).toContain('repo1-s3-bucket=backups\n');
    expect(text).toContain('repo1-path=/prod/pg\n');
    expect(text).toContain('repo1-s3-uri-style=path\n');
    expect(text).toContain('repo1-storage-ca-file=/etc/homeostat/s3-ca/ca.crt\n');
    expect(text).toContain('[cluster-a]\npg1-path=/var/lib/postgresql/data\npg1-port=5432\n');
    // The speed settings of ADR 0219: zstd level 1, small files bundled; the page checksums stay on.
    expect(text).toContain('compress-type=zst\ncompress-level=1\nrepo1-bundle=y\n');
    expect(text).not.toContain('checksum-page');
    expect(text).not.toContain('archive-check');
    expect(text).not.toContain('AKIA');
    expect(text).not.toContain('s3cr3t');
  });

  it('addresses Amazon S3 by region and host-style without an endpoint, the bucket root without a prefix', () => {
    const text = renderPgBackRestConfig({
      stanza: 's',
      destination: { bucket: 'b', region: 'us-east-2', forcePathStyle: false },
      instance,
      workDir: '/w',
    });
    expect(text).toContain('repo1-s3-endpoint=s3.us-east-2.amazonaws.com\nrepo1-storage-port=443\n');
    expect(text).toContain('repo1-s3-uri-style=host\n');
    expect(text).toContain('repo1-path=/\n');
  });

  it('refuses an http endpoint and a value that would add an option', () => {
    const render = (d: typeof destination) =>
      renderPgBackRestConfig({ stanza: 's', destination: d, instance, workDir: '/w' });
    expect(() => render({ ...destination, endpoint: 'http://minio:9000' })).toThrow(
      "the backup destination's endpoint http://minio:9000 is not https: pgBackRest reaches S3 over TLS only",
    );
    expect(() => render({ ...destination, prefix: 'a\nrepo1-type=posix' })).toThrow(
      'must not contain a line break',
    );
  });

  it('gives the credentials as environment variables or an include file', () => {
    expect(credentialEnvironment(credentials)).toEqual({
      PGBACKREST_REPO1_S3_KEY: 'AKIAEXAMPLE',
      PGBACKREST_REPO1_S3_KEY_SECRET: 's3cr3t/with+chars',
      PGBACKREST_REPO1_S3_TOKEN: 'tok',
    });
    expect(renderCredentialsConfig(credentials)).toBe(
      '[global]\nrepo1-s3-key=AKIAEXAMPLE\nrepo1-s3-key-secret=s3cr3t/with+chars\nrepo1-s3-token=tok\n',
    );
  });

  it('renders archive_command and restore_command without credentials, quoted for postgresql.conf', () => {
    const target = { configFile: '/etc/pgbackrest/pgbackrest.conf', stanza: 'cluster-a' };
    expect(archiveCommand(target)).toBe(
      'pgbackrest --config=/etc/pgbackrest/pgbackrest.conf --stanza=cluster-a archive-push %p',
    );
    expect(restoreCommand(target, '/data/x y')).toBe(
      'pgbackrest --config=/etc/pgbackrest/pgbackrest.conf --stanza=cluster-a \'--pg1-path=/data/x y\' archive-get %f "%p"',
    );
    expect(confLine('restore_command', "a 'b'")).toBe("restore_command = 'a ''b'''");
  });

  it("serves an instance's files over TLS to the backup client alone, for its own stanza", () => {
    const text = renderPgBackRestConfig({
      stanza: 'ledger',
      destination,
      instance,
      workDir: '/w',
      tlsServer: {
        address: '0.0.0.0',
        port: 8432,
        certFile: '/tls/tls.crt',
        keyFile: '/tls/tls.key',
        caFile: '/tls/ca.crt',
        clientCommonName: 'homeostat-backup',
      },
    });
    expect(text).toContain('tls-server-port=8432\ntls-server-cert-file=/tls/tls.crt\n');
    expect(text).toContain('tls-server-auth=homeostat-backup=ledger\n');
    const render = (clientCommonName: string) =>
      renderPgBackRestConfig({
        stanza: 'ledger',
        destination,
        instance,
        workDir: '/w',
        tlsServer: { address: '0.0.0.0', port: 1, certFile: '', keyFile: '', caFile: '', clientCommonName },
      });
    expect(() => render('a=b,c')).toThrow('is not a plain name');
  });

  it('names each instance as a TLS host of the backup pod, and copies from a standby only when told', () => {
    const hosts = renderRepositoryHostConfig({
      stanza: 'ledger',
      destination,
      workDir: '/tmp/pgbackrest',
      instances: [
        { host: 'ledger-0.ledger-instances.shop.svc', ...instance },
        { host: 'ledger-1.ledger-instances.shop.svc', ...instance },
      ],
      client: { certFile: '/c/tls.crt', keyFile: '/c/tls.key', caFile: '/c/ca.crt' },
      serverPort: 8432,
      fromStandby: true,
    });
    expect(hosts).toContain('backup-standby=y\n');
    expect(hosts).toContain(
      'pg1-host=ledger-0.ledger-instances.shop.svc\npg1-host-type=tls\npg1-host-port=8432\n',
    );
    expect(hosts).toContain('pg2-host=ledger-1.ledger-instances.shop.svc\n');
    expect(hosts).toContain('pg2-host-key-file=/c/tls.key\n');
    expect(hosts).not.toContain('AKIA');
    expect(() =>
      renderRepositoryHostConfig({
        stanza: 'ledger',
        destination,
        workDir: '/w',
        instances: [],
        client: { certFile: '', keyFile: '', caFile: '' },
        serverPort: 8432,
        fromStandby: false,
      }),
    ).toThrow('at least one instance');
  });

  it("reads a recovery source as repo2, so its credentials never mix with the cluster's own", () => {
    const text = renderRecoveryConfig({
      stanza: 'old',
      destination,
      workDir: '/run/r',
      dataDir: '/data/pgdata',
    });
    expect(text).toContain('repo2-type=s3\nrepo2-s3-endpoint=s3.internal\n');
    expect(text).toContain('repo2-storage-ca-file=/etc/homeostat/s3-ca/ca.crt\n');
    expect(text).not.toContain('repo1-');
    expect(text).toContain('[old]\npg1-path=/data/pgdata\n');
  });
});

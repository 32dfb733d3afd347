// The PostgreSQLCluster CRD on a real kube-apiserver + etcd: defaults, and every refusal with the
// message a person reads in `kubectl apply`'s output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient } from '@homeostat/reconcile';
import { postgresClusterCrd } from './postgres-cluster-crd.ts';
import { postgresClusters, type PostgresCluster } from './postgres-cluster-types.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-api-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });

/** Creates a cluster as a user writes it (only the fields given) and returns it as stored. */
function create(name: string, spec: Record<string, unknown> | undefined): Promise<PostgresCluster> {
  // The object is deliberately partial or wrong: it is what a person might write.
  const object = { metadata: { name, namespace }, ...(spec ? { spec } : {}) } as unknown as PostgresCluster;
  return client.create(postgresClusters, object);
}

/** The API server's message for a create it refuses; fails the test when it is accepted. */
async function rejection(name: string, spec: Record<string, unknown> | undefined): Promise<string> {
  try {
    await create(name, spec);
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error(`${name} was accepted`);
}

/** The API server's message for an update it refuses. */
async function updateRejection(name: string, patch: Record<string, unknown>): Promise<string> {
  try {
    await client.patch(postgresClusters, name, namespace, { spec: patch }, { patchType: 'merge' });
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error(`the update of ${name} was accepted`);
}

describe('PostgreSQLCluster CRD on a real kube-apiserver + etcd', () => {
  beforeAll(async () => {
    await installCrds(kubeConfig, [postgresClusterCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });
  afterAll(() => client.close());

  it('fills in every default from an empty spec', async () => {
    const created = await create('defaults', {});
    expect(created.spec).toEqual({
      instances: 3,
      postgresVersion: 18,
      storage: { size: '1Gi', retention: 'Delete' },
      scheduling: { antiAffinity: 'preferred', topologyKey: 'kubernetes.io/hostname' },
      postgresql: { synchronous: { mode: 'off', number: 1 } },
      failoverDelay: '1s',
      bootstrap: { database: 'app', owner: 'app' },
      superuserAccess: false,
      podDisruptionBudget: { enabled: true },
    });
  });

  it('accepts a full, sensible spec', async () => {
    const created = await create('full', {
      instances: 5,
      postgresVersion: 17,
      storage: { size: '20Gi', storageClassName: 'fast', retention: 'Retain' },
      resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } },
      scheduling: {
        antiAffinity: 'required',
        topologyKey: 'topology.kubernetes.io/zone',
        nodeSelector: { disk: 'ssd' },
        tolerations: [{ key: 'db', operator: 'Exists', effect: 'NoSchedule' }],
      },
      postgresql: {
        parameters: { max_connections: '200', 'pg_stat_statements.max': '5000', work_mem: '16MB' },
        synchronous: { mode: 'required', number: 2 },
      },
      failoverDelay: '500ms',
      primary: 'full-4',
      bootstrap: { database: 'orders', owner: 'orders_owner' },
      superuserAccess: true,
    });
    expect(created.spec.primary).toBe('full-4');
  });

  it('accepts spec.backup with its defaults, and refuses what pgBackRest cannot use, saying why', async () => {
    const s3 = {
      bucket: 'pg-backups',
      endpoint: 'https://s3.internal:9000',
      credentialsSecretName: 's3-creds',
    };
    const created = await create('backup', {
      backup: { destination: { s3: { ...s3, ca: { secretName: 's3-ca' } } } },
    });
    expect(created.spec.backup).toEqual({
      destination: {
        s3: { ...s3, region: 'us-east-1', forcePathStyle: false, ca: { secretName: 's3-ca', key: 'ca.crt' } },
      },
      archiveTimeout: '5m',
      retention: { keepLast: 7 },
    });
    // Amazon S3 (no endpoint) needs nothing more.
    await create('backup-aws', {
      backup: { destination: { s3: { bucket: 'pg-aws', credentialsSecretName: 'c' } } },
    });
    expect(
      await rejection('backup-http', {
        backup: { destination: { s3: { ...s3, endpoint: 'http://minio:9000' } } },
      }),
    ).toContain(
      'spec.backup.destination.s3.endpoint: Invalid value: backup.destination.s3.endpoint must be an https:// URL: pgBackRest reaches S3 over TLS only',
    );
    expect(
      await rejection('backup-short', { backup: { destination: { s3 }, archiveTimeout: '5s' } }),
    ).toContain('backup.archiveTimeout must be between 30s and 1h');
    expect(
      await rejection('backup-long', { backup: { destination: { s3 }, archiveTimeout: '2h' } }),
    ).toContain('backup.archiveTimeout must be between 30s and 1h');
    expect(
      await rejection('backup-owned', {
        backup: { destination: { s3 } },
        postgresql: { parameters: { archive_timeout: '60' } },
      }),
    ).toContain(
      'postgresql.parameters may not set archive_timeout: the operator owns it (the operator sets it from spec.backup.archiveTimeout)',
    );
    expect(await rejection('backup-nowhere', { backup: { destination: {} } })).toContain(
      'spec.backup.destination.s3: Required value',
    );
  });

  it('accepts a backup schedule and retention, and refuses what is not a cron time or a span, saying why', async () => {
    const s3 = { bucket: 'pg-backups', endpoint: 'https://s3.internal:9000', credentialsSecretName: 'c' };
    const scheduled = await create('scheduled', {
      backup: { destination: { s3 }, schedule: '0 3 * * *', retention: { keepLast: 3, maxAge: '30d' } },
    });
    expect(scheduled.spec.backup).toMatchObject({
      schedule: '0 3 * * *',
      retention: { keepLast: 3, maxAge: '30d' },
    });
    await create('scheduled-daily', { backup: { destination: { s3 }, schedule: '@daily' } });
    // {} keeps every backup: the default applies only when retention is left out.
    const keepAll = await create('keep-all', {
      backup: { destination: { s3 }, schedule: '@hourly', retention: {} },
    });
    expect(keepAll.spec.backup?.retention).toEqual({});
    const hours = await create('by-hours', {
      backup: { destination: { s3 }, retention: { maxAge: '720h' } },
    });
    expect(hours.spec.backup?.retention).toEqual({ maxAge: '720h' });

    expect(
      await rejection('schedule-words', { backup: { destination: { s3 }, schedule: 'every night' } }),
    ).toContain(
      'spec.backup.schedule: Invalid value: "every night": schedule must be a cron expression of five fields (minute hour day-of-month month day-of-week)',
    );
    expect(
      await rejection('schedule-six', { backup: { destination: { s3 }, schedule: '0 0 3 * * *' } }),
    ).toContain('schedule must be a cron expression of five fields');
    expect(
      await rejection('keep-none', { backup: { destination: { s3 }, retention: { keepLast: 0 } } }),
    ).toContain('spec.backup.retention.keepLast: Invalid value: 0');
    for (const [name, maxAge] of [
      ['age-minutes', '90m'],
      ['age-zero', '0d'],
      ['age-weeks', '4w'],
      ['age-blank', '30 d'],
    ] as const) {
      expect(
        await rejection(name, { backup: { destination: { s3 }, retention: { maxAge } } }),
        maxAge,
      ).toContain(
        `spec.backup.retention.maxAge: Invalid value: "${maxAge}": backup.retention.maxAge must be a whole number of days or hours from 1 to 9999, e.g. 30d or 720h`,
      );
    }
  });

  it('refuses what would break the cluster, with a message that says what to do', async () => {
    expect(await rejection('zero', { instances: 0 })).toContain(
      'spec.instances: Invalid value: 0: spec.instances in body should be greater than or equal to 1',
    );
    expect(await rejection('ten', { instances: 10 })).toContain(
      'spec.instances in body should be less than or equal to 9',
    );
    expect(await rejection('v16', { postgresVersion: 16 })).toContain(
      'spec.postgresVersion: Unsupported value: 16: supported values: "17", "18"',
    );
    expect(
      await rejection('owned', { postgresql: { parameters: { wal_level: 'minimal', work_mem: '8MB' } } }),
    ).toContain(
      'spec.postgresql.parameters: Invalid value: postgresql.parameters may not set wal_level: the operator owns it (streaming replication needs replica)',
    );
    // Every offending parameter is named, each with its reason.
    const two = await rejection('owned2', {
      postgresql: { parameters: { port: '5433', archive_mode: 'on' } },
    });
    expect(two).toContain('postgresql.parameters may not set port: the operator owns it');
    expect(two).toContain(
      'postgresql.parameters may not set archive_mode: the operator owns it (the operator sets it from spec.backup',
    );
    expect(await rejection('badname', { postgresql: { parameters: { 'Max Connections': '1' } } })).toContain(
      'parameter names are lowercase letters, digits and "_", with one "." for an extension\'s parameter',
    );
    expect(
      await rejection('multiline', {
        postgresql: { parameters: { work_mem: "4MB'\nwal_level = 'minimal" } },
      }),
    ).toContain('a parameter value must fit on one line');
    expect(
      await rejection('syncall', {
        instances: 2,
        postgresql: { synchronous: { mode: 'required', number: 2 } },
      }),
    ).toContain(
      'spec.postgresql.synchronous.number: Invalid value: postgresql.synchronous.number must be less than instances',
    );
    expect(await rejection('syncmode', { postgresql: { synchronous: { mode: 'on' } } })).toContain(
      'spec.postgresql.synchronous.mode: Unsupported value: "on": supported values: "off", "preferred", "required"',
    );
    expect(await rejection('notq', { storage: { size: 'big' } })).toContain(
      'spec.storage.size: Invalid value: "big": must be a Kubernetes quantity such as 128Mi, 1Gi, 250m or 1',
    );
    expect(
      await rejection('inverted', { resources: { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } }),
    ).toContain('resources.requests.memory must not be larger than resources.limits.memory');
    expect(await rejection('slow', { failoverDelay: '2h' })).toContain('failoverDelay may be at most 10m');
    expect(await rejection('sloppy', { failoverDelay: 'soon' })).toContain(
      'spec.failoverDelay in body should match',
    );
    expect(await rejection('stranger', { primary: 'other-0' })).toContain(
      "spec.primary: Invalid value: spec.primary must name one of this cluster's instances: the cluster's name, '-' and a number below instances",
    );
    expect(await rejection('beyond', { instances: 2, primary: 'beyond-2' })).toContain(
      "spec.primary must name one of this cluster's instances",
    );
    expect(await rejection('pgdb', { bootstrap: { database: 'postgres' } })).toContain(
      'spec.bootstrap.database: Invalid value: bootstrap.database may not be postgres, template0 or template1',
    );
    for (const owner of ['postgres', 'streaming_replica', 'homeostat']) {
      expect(await rejection(`owner-${owner.replace('_', '-')}`, { bootstrap: { owner } })).toContain(
        'spec.bootstrap.owner: Invalid value: bootstrap.owner may not be homeostat, postgres or streaming_replica: the operator creates and uses these roles',
      );
    }
    expect(await rejection('owner-pg', { bootstrap: { owner: 'pg_monitor' } })).toContain(
      'bootstrap.owner may not start with pg_: PostgreSQL reserves those names',
    );
    for (const owner of ['public', 'current_user']) {
      expect(await rejection(`owner-${owner.replace('_', '-')}`, { bootstrap: { owner } })).toContain(
        'bootstrap.owner may not be public, none, current_user, current_role or session_user',
      );
    }
    expect(await rejection('quoted', { bootstrap: { owner: 'Robert"; DROP' } })).toContain(
      'spec.bootstrap.owner in body should match',
    );
    expect(await rejection('nospec', undefined)).toContain('spec: Required value: spec is required');
    expect(await rejection('9lives', {})).toContain(
      'metadata.name: Invalid value: metadata.name must be lowercase letters, digits and "-", starting with a letter',
    );
    expect(await rejection('x'.repeat(49), {})).toContain('metadata.name: Too long: may not be more than 48');
  });

  it('refuses parameters that would weaken replication, failover or synchronous commits, naming the guarantee', async () => {
    const parameters = (values: Record<string, string>, synchronous?: string) => ({
      instances: 3,
      postgresql: { parameters: values, ...(synchronous ? { synchronous: { mode: synchronous } } : {}) },
    });
    // Settings the failover's timing rests on are the operator's.
    for (const [name, value, why] of [
      ['wal_receiver_timeout', '60s', 'a standby lets go of a silent primary within 3 s'],
      ['wal_sender_timeout', '0', 'a primary drops a silent standby within 3 s'],
      ['wal_receiver_status_interval', '30s', 'standbys report every second'],
      ['hot_standby_feedback', 'off', 'replica queries must not hold up replay'],
      ['recovery_min_apply_delay', '1h', 'a replica that delays replay is never eligible for promotion'],
      ['full_page_writes', 'off', 'pg_rewind needs it on'],
    ] as const) {
      expect(await rejection(`owned-${name.replaceAll('_', '-')}`, parameters({ [name]: value }))).toContain(
        `spec.postgresql.parameters: Invalid value: postgresql.parameters may not set ${name}: the operator owns it (${why}`,
      );
    }
    // synchronous_commit and fsync: anything while asynchronous; nothing weaker than on when synchronous.
    for (const mode of ['required', 'preferred']) {
      for (const weak of ['local', 'remote_write', 'off', 'On']) {
        expect(
          await rejection(
            `commit-${mode}-${weak.toLowerCase().replace('_', '-')}`,
            parameters({ synchronous_commit: weak }, mode),
          ),
        ).toContain(
          'spec.postgresql.parameters: Invalid value: postgresql.parameters.synchronous_commit must be on or remote_apply while postgresql.synchronous.mode is not off: other values acknowledge a commit before a standby has it',
        );
      }
      expect(await rejection(`fsync-${mode}`, parameters({ fsync: 'off' }, mode))).toContain(
        'postgresql.parameters.fsync may not be off while postgresql.synchronous.mode is not off',
      );
    }
    await create(
      'commit-strong',
      parameters({ synchronous_commit: 'remote_apply', fsync: 'on' }, 'required'),
    );
    await create('commit-async', parameters({ synchronous_commit: 'local', fsync: 'off' }));
    // Bounded: a value within the bound is accepted.
    for (const value of ['2', 'none', '']) {
      expect(
        await rejection(
          `reserved-${value || 'empty'}`,
          parameters({ superuser_reserved_connections: value }),
        ),
      ).toContain(
        'postgresql.parameters.superuser_reserved_connections must be a whole number of at least 3: the operator observes and fails over through these connections',
      );
    }
    await create('reserved-5', parameters({ superuser_reserved_connections: '5' }));
    for (const name of ['max_standby_streaming_delay', 'max_standby_archive_delay']) {
      expect(await rejection(`forever-${name.replaceAll('_', '-')}`, parameters({ [name]: '-1' }))).toContain(
        `postgresql.parameters.${name} may not be negative: a replica query would hold up replay for ever`,
      );
    }
    await create('delay-60s', parameters({ max_standby_streaming_delay: '60s' }));
    expect(await rejection('slots-unbounded', parameters({ max_slot_wal_keep_size: '-1' }))).toContain(
      'postgresql.parameters.max_slot_wal_keep_size may not be negative: a replica that is down or behind would keep WAL on the primary without bound',
    );
    await create('slots-8gb', parameters({ max_slot_wal_keep_size: '8GB' }));
  });

  it('refuses changes that cannot be made to a cluster that exists', async () => {
    await create('fixed', { storage: { size: '5Gi', storageClassName: 'fast' } });
    expect(await updateRejection('fixed', { postgresVersion: 17 })).toContain(
      'postgresVersion cannot change: a major upgrade needs pg_upgrade, which this operator does not do yet',
    );
    expect(await updateRejection('fixed', { storage: { size: '1Gi' } })).toContain(
      'spec.storage.size: Invalid value: storage.size may grow but never shrink',
    );
    expect(await updateRejection('fixed', { storage: { storageClassName: 'slow' } })).toContain(
      'storage.storageClassName cannot change',
    );
    expect(await updateRejection('fixed', { bootstrap: { database: 'other' } })).toContain(
      'bootstrap cannot change once the cluster exists',
    );
    // What may change does.
    const grown = await client.patch(
      postgresClusters,
      'fixed',
      namespace,
      { spec: { storage: { size: '10Gi' }, instances: 5, failoverDelay: '3s' } },
      { patchType: 'merge' },
    );
    expect(grown.spec).toMatchObject({ instances: 5, failoverDelay: '3s', storage: { size: '10Gi' } });
  });

  it('scales through the scale subresource within 1 to 9', async () => {
    await create('scalable', { instances: 2 });
    const scale = (replicas: number) =>
      client.patch(postgresClusters, 'scalable', namespace, { spec: { replicas } }, { subresource: 'scale' });
    await scale(4);
    expect((await client.get(postgresClusters, 'scalable', namespace)).spec.instances).toBe(4);
    await expect(scale(0)).rejects.toThrow(/spec.instances in body should be greater than or equal to 1/);
  });
});

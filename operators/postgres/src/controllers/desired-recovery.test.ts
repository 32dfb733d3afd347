// What spec.bootstrap.recovery puts in the first instance pod: the source repository as repo2 with
// its own credentials and CA, the target as pgBackRest reads it, and only while the cluster may
// still bootstrap (never in the pod spec's hash).
import { describe, expect, it } from 'vitest';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import { desiredInstancePod, instancePodSpec, specHash } from './desired-pod.ts';
import { recoveryPodParts, recoveryTime } from './desired-recovery.ts';

const s3 = {
  bucket: 'pg-backups',
  prefix: 'prod/ledger',
  endpoint: 'https://s3.internal:9000',
  forcePathStyle: true,
  credentialsSecretName: 'old-credentials',
  ca: { secretName: 'old-ca', key: 'ca.pem' },
};
const recovered = (target?: Record<string, string>) =>
  storedCluster('copy', 'shop', {
    bootstrap: {
      recovery: { source: { clusterName: 'ledger', destination: { s3 } }, ...(target ? { target } : {}) },
    },
  });
const paths = { pgdata: '/data/pgdata', run: '/run/pg' };
const envOf = (parts: ReturnType<typeof recoveryPodParts>) =>
  Object.fromEntries(
    parts.env.map((e) => [e.name, e.value ?? `secret ${e.valueFrom?.secretKeyRef?.key ?? ''}`]),
  );

describe('the recovery part of the first instance pod', () => {
  it('reads the source as repo2, with its credentials and CA apart from the cluster own', () => {
    const parts = recoveryPodParts(recovered({ time: '2026-11-27T04:40:50.5Z' }), paths);
    const env = envOf(parts);
    expect(env['PG_RECOVERY_STANZA']).toBe('ledger');
    expect(env['PG_RECOVERY_TARGET_TYPE']).toBe('time');
    expect(env['PG_RECOVERY_TARGET']).toBe('2026-11-27 04:40:50.500+00');
    expect(env['PG_RECOVERY_CONFIG']).toContain('repo2-path=/prod/ledger\n');
    expect(env['PG_RECOVERY_CONFIG']).toContain('repo2-storage-ca-file=/etc/homeostat/recovery-ca/ca.pem\n');
    expect(env['PG_RECOVERY_CONFIG']).toContain('[ledger]\npg1-path=/data/pgdata\n');
    expect(env['PGBACKREST_REPO2_S3_KEY_SECRET']).toBe('secret secretAccessKey');
    expect(parts.volumes.map((v) => v.name)).toEqual(['recovery-ca']);
    expect(envOf(recoveryPodParts(recovered({ lsn: '0/3a000028' }), paths))['PG_RECOVERY_TARGET']).toBe(
      '0/3A000028',
    );
    const toEnd = envOf(recoveryPodParts(recovered(), paths));
    expect(toEnd['PG_RECOVERY_TARGET_TYPE']).toBe('default');
    expect(toEnd['PG_RECOVERY_TARGET']).toBeUndefined();
  });

  it('goes only to a pod that may bootstrap the cluster, and never changes the pod hash', () => {
    const cluster = recovered({ restorePoint: 'before-migration' });
    const names = (initdb: 'allowed' | 'refused', role: 'primary' | 'replica') =>
      (
        desiredInstancePod(cluster, 'copy-0', { image: 'pg:18', role, initdb }).spec?.containers[0]?.env ?? []
      ).map((e) => e.name);
    expect(names('allowed', 'primary')).toContain('PG_RECOVERY_CONFIG');
    expect(names('refused', 'primary')).not.toContain('PG_RECOVERY_CONFIG');
    expect(names('allowed', 'replica')).not.toContain('PG_RECOVERY_CONFIG');
    const plain = storedCluster('copy', 'shop');
    expect(specHash(instancePodSpec(cluster, 'pg:18'))).toBe(specHash(instancePodSpec(plain, 'pg:18')));
  });

  it('refuses a time that is none', () => {
    expect(() => recoveryTime('yesterday')).toThrow("'yesterday' is not a time");
  });
});

// Where retention may delete a scheduled backup's snapshot: from its spec, name and uid only, and
// never when its status says otherwise, in a member's claim, or out of the backup directory.
import { describe, expect, it } from 'vitest';
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import { testCluster } from '../../test-support/test-cluster.ts';
import type { BackupDestination } from './backup-store.ts';
import { pruneTarget } from './prune-target.ts';

const claim: BackupDestination = { persistentVolumeClaim: { claimName: 'backups', directory: 'etcd' } };
const bucket: BackupDestination = {
  s3: { bucket: 'b', prefix: 'p/', region: 'us-east-1', forcePathStyle: true, credentialsSecretName: 's' },
};
const cluster = testCluster({ backup: { keep: 1, destination: bucket } });
const key = 'shop/orders/orders-202601010000-0123abcd.db';

function backup(destination: BackupDestination | undefined, location: string, at = key): EtcdBackup {
  return {
    metadata: { name: 'orders-202601010000', namespace: 'shop', uid: '0123abcd-0000' },
    spec: { clusterName: 'orders', ...(destination ? { destination } : {}) },
    status: { phase: 'Succeeded', location, key: at },
  };
}
const noMember = () => false;

describe('pruneTarget', () => {
  it('finds the file in the claim its spec names, under its directory', () => {
    expect(pruneTarget(backup(claim, `pvc://backups/etcd/${key}`), cluster, noMember)).toEqual({
      kind: 'claim',
      file: { claimName: 'backups', path: `etcd/${key}` },
      location: `pvc://backups/etcd/${key}`,
    });
  });

  it('finds the object in the bucket of its spec, or of its cluster for a backup without one', () => {
    const target = { kind: 's3', destination: bucket, key, location: `s3://b/p/${key}` };
    expect(pruneTarget(backup(bucket, `s3://b/p/${key}`), cluster, noMember)).toEqual(target);
    expect(pruneTarget(backup(undefined, `s3://b/p/${key}`), cluster, noMember)).toEqual(target);
  });

  it('refuses when the status names another file, a member claim, or a path with ".."', () => {
    const elsewhere = pruneTarget(
      backup(claim, 'pvc://orders-0-data/member/snap/db', 'member/snap/db'),
      cluster,
      noMember,
    );
    expect(elsewhere).toMatchObject({ kind: 'refused' });
    expect(elsewhere.kind === 'refused' && elsewhere.message).toContain('pvc://orders-0-data/member/snap/db');
    const member: BackupDestination = { persistentVolumeClaim: { claimName: 'orders-0-data' } };
    expect(
      pruneTarget(backup(member, `pvc://orders-0-data/${key}`), cluster, (c) => c === 'orders-0-data'),
    ).toMatchObject({ kind: 'refused', message: "claim orders-0-data holds an etcd member's data" });
    const climbing: BackupDestination = {
      persistentVolumeClaim: { claimName: 'backups', directory: '../x' },
    };
    expect(pruneTarget(backup(climbing, `pvc://backups/../x/${key}`), cluster, noMember)).toMatchObject({
      kind: 'refused',
    });
  });
});

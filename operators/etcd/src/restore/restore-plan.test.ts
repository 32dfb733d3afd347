import { describe, expect, it } from 'vitest';
import { planRestore, type RestoreMember } from './restore-plan.ts';

const members: RestoreMember[] = [0, 1, 2].map((i) => ({
  name: `etcd-${i}`,
  peerUrl: `http://10.0.0.${i}:2380`,
  clientUrl: `http://10.0.0.${i}:2379`,
  dataDir: `/var/lib/etcd-${i}`,
}));

describe('restore plan', () => {
  it('gives every member the same snapshot, initial cluster and token, and its own name and data dir', () => {
    const plan = planRestore({
      snapshotPath: '/b/s.db',
      members,
      clusterToken: 'new-token',
      etcdutlPath: '/bin/etcdutl',
    });
    const initialCluster =
      'etcd-0=http://10.0.0.0:2380,etcd-1=http://10.0.0.1:2380,etcd-2=http://10.0.0.2:2380';
    expect(plan.initialCluster).toBe(initialCluster);
    expect(plan.steps[1]).toMatchObject({
      command: '/bin/etcdutl',
      args: [
        'snapshot',
        'restore',
        '/b/s.db',
        '--name=etcd-1',
        `--initial-cluster=${initialCluster}`,
        '--initial-cluster-token=new-token',
        '--initial-advertise-peer-urls=http://10.0.0.1:2380',
        '--data-dir=/var/lib/etcd-1',
      ],
    });
    expect(plan.steps[1]?.etcdFlags).toContain('--initial-cluster-state=new');
  });

  it('adds --bump-revision with --mark-compacted when asked', () => {
    const plan = planRestore({
      snapshotPath: '/s',
      members,
      clusterToken: 't',
      etcdutlPath: 'etcdutl',
      bumpRevision: 1_000_000,
    });
    expect(plan.steps[0]?.args.slice(-2)).toEqual(['--bump-revision=1000000', '--mark-compacted']);
  });

  it('rejects duplicate names, peer URLs, data dirs and relative paths with every problem listed', () => {
    const bad = [members[0] as RestoreMember, { ...(members[0] as RestoreMember), dataDir: 'relative' }];
    expect(() =>
      planRestore({ snapshotPath: '/s', members: bad, clusterToken: '', etcdutlPath: 'e' }),
    ).toThrow(/appears twice.*peer URL .* appears twice.*not an absolute path.*empty cluster token/);
  });
});

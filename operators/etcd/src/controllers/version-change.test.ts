import { describe, expect, it } from 'vitest';
import { judgeVersionChange } from './version-change.ts';

describe('judgeVersionChange', () => {
  it('leaves upgrades, patches and a cluster at its version to the roll as always', () => {
    expect(judgeVersionChange('3.7.3', ['3.6.16', '3.6.16'], '3.6.0')).toEqual({ kind: 'forward' });
    expect(judgeVersionChange('3.6.10', ['3.6.16'], '3.6.0')).toEqual({ kind: 'forward' });
    expect(judgeVersionChange('3.6.16', ['3.6.16'], undefined)).toEqual({ kind: 'forward' });
    expect(judgeVersionChange('3.6.16', [], undefined)).toEqual({ kind: 'forward' });
  });

  it('rolls back to the older minor while the cluster version is still that minor', () => {
    expect(judgeVersionChange('3.6.16', ['3.7.3', '3.6.16', '3.7.3'], '3.6.0')).toEqual({
      kind: 'back',
      clusterVersion: '3.6.0',
    });
  });

  it('refuses once the cluster version moved, keeping the newest image for members made meanwhile', () => {
    const change = judgeVersionChange('3.6.16', ['3.7.3', '3.7.3', '3.7.3'], '3.7.0', 'mirror.local/etcd');
    expect(change).toEqual({
      kind: 'refused',
      reason: 'DowngradeRefused',
      keepImage: 'mirror.local/etcd:v3.7.3',
      message: expect.stringMatching(
        /^etcd 3\.7 cannot go back to 3\.6 once the cluster version is 3\.7 \(etcd reports 3\.7\.0\).*The members stay on 3\.7\.3; set spec\.version to 3\.7\.3 again, or restore a backup into a new cluster running 3\.6\.16$/,
      ),
    });
  });

  it('touches nothing while no member tells the cluster version', () => {
    expect(judgeVersionChange('3.6.16', ['3.7.3'], undefined)).toMatchObject({
      kind: 'refused',
      reason: 'ClusterVersionUnknown',
      keepImage: 'gcr.io/etcd-development/etcd:v3.7.3',
    });
  });
});

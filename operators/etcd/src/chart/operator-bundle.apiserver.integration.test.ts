// What the image runs: the operator bundled into one file (libs/operator-kit/scripts/bundle-operator.ts),
// started as its own process against a real kube-apiserver. etcd3 reads its .proto files when it is
// loaded, so a bundle that starts at all proves they travel with it; this one also reconciles.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installCrds,
  logTail,
  repoRoot,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';
import { sharedKubeConfig, sharedKubeconfigPath } from '@homeostat/testing/shared';
import { builtin, KubeClient } from '@homeostat/reconcile';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { createEtcdCluster, createTestNamespace } from '../test-support/etcd-cluster-fixtures.ts';

const kubeConfig = sharedKubeConfig();
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const namespace = `etcd-bundle-${process.pid}`;
const workspace = join(repoRoot, 'operators', 'etcd');

describe('the bundled operator (what the image runs)', () => {
  let operator: ManagedProcess | undefined;
  let logDir: string;

  beforeAll(async () => {
    execFileSync(
      process.execPath,
      [join(repoRoot, 'libs/operator-kit/scripts/bundle-operator.ts'), workspace],
      {
        stdio: 'pipe',
      },
    );
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    logDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-bundle-'));
  });

  afterAll(async () => {
    await operator?.stop(5000);
    client.close();
    await rm(logDir, { recursive: true, force: true });
  });

  it('starts, syncs its caches and creates the first member of a new cluster', async () => {
    operator = startProcess({
      name: 'bundled etcd operator',
      command: process.execPath,
      args: [
        join(workspace, 'dist', 'operator.mjs'),
        '--leader-elect=false',
        `--watch-namespaces=${namespace}`,
        '--health-port=0',
        '--metrics-port=0',
      ],
      logFile: join(logDir, 'operator.log'),
      env: { ...process.env, KUBECONFIG: sharedKubeconfigPath() },
    });
    await createEtcdCluster(client, 'bundled', namespace, { size: 1 });
    await waitUntil(
      'member pod and status from the bundled operator',
      async () =>
        (await client.find(builtin.pods, 'bundled-0', namespace)) !== undefined &&
        (await client.get(etcdClusters, 'bundled', namespace)).status?.phase === 'Creating',
      { timeoutMs: 60_000, describe: () => logTail(join(logDir, 'operator.log')) },
    );
    expect(operator.isRunning()).toBe(true);
    expect(logTail(join(logDir, 'operator.log'))).toContain('"msg":"caches synced"');
  });
});

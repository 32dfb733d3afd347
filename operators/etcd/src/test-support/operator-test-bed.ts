// The set-up every EtcdCluster controller test makes, once: the CRDs on the shared real
// kube-apiserver, a namespace of the file's own, the stand-in kubelet (MemberPodRunner) running
// real etcd members for the pods the operator makes, and the operator itself with quick health
// polls. On a failed test it prints the operator's warnings and each cluster's status; after the
// file everything it started is stopped and removed. Registered as vitest hooks by the caller.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { GarbageCollectorStandIn, memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { addEtcdBackupController } from '../controllers/backup/etcd-backup-controller.ts';
import type { MemberAddressing } from '../controllers/member-addressing.ts';
import { createTestNamespace, startTestOperator } from './etcd-cluster-fixtures.ts';
import { loopbackAddressing } from './loopback-addressing.ts';
import { MemberPodRunner } from './member-pod-runner.ts';

export interface OperatorTestBed {
  readonly kubeConfig: KubeConfig;
  /** A client acting as the user (field manager `test-user`). */
  readonly client: KubeClient;
  readonly namespace: string;
  readonly addressing: MemberAddressing;
  /** How long the file's waits last, and how often they look. */
  readonly poll: { readonly timeoutMs: number; readonly intervalMs: number };
  /** The stand-in kubelet; set once the file's first hook ran. */
  readonly runner: MemberPodRunner;
  /** The EtcdCluster `name` of the file's namespace, as stored now. */
  cluster(name: string): Promise<EtcdCluster>;
  /** Stops the operator (a failure made while it is away is found by the next one). */
  stopOperator(): Promise<void>;
  /** Starts it again, as a new process would: empty caches, state read from the API server. */
  startOperator(): Promise<void>;
  /**
   * Lets the garbage collector (the test control plane runs none) act for the deleted owner
   * `ownerUid`, from now until the file ends; returns what its first sweep deleted.
   */
  collectGarbage(ownerUid: string): Promise<string[]>;
}

export interface OperatorTestBedOptions {
  /** Names the namespace (`etcd-<label>-<pid>`) and the members' work directory. */
  readonly label: string;
  /** Default 90 s. */
  readonly pollTimeoutMs?: number;
  /** The EtcdBackup controller too, with quick waits (its agent pods run through the runner). */
  readonly backups?: boolean;
  /** More controllers for the operator's manager (the backup schedule, say). */
  readonly addControllers?: (manager: Manager, bed: OperatorTestBed) => void;
}

/** Registers the hooks that make and remove the test bed; returns it (filled in by `beforeAll`). */
export function useOperatorTestBed(options: OperatorTestBedOptions): OperatorTestBed {
  const kubeConfig = sharedKubeConfig();
  const namespace = `etcd-${options.label}-${process.pid}`;
  const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
  const { log, lines } = memoryLogger();
  let runner: MemberPodRunner | undefined;
  let manager: Manager | undefined;
  let workDir: string | undefined;
  const garbageCollector = new GarbageCollectorStandIn(client, namespace);
  const bed: OperatorTestBed = {
    kubeConfig,
    client,
    namespace,
    addressing: loopbackAddressing(),
    poll: { timeoutMs: options.pollTimeoutMs ?? 90_000, intervalMs: 200 },
    get runner() {
      if (!runner) throw new Error('the test bed is not up yet: use it inside tests or later hooks');
      return runner;
    },
    cluster: (name) => client.get(etcdClusters, name, namespace),
    collectGarbage: (ownerUid) => garbageCollector.collect(ownerUid),
    async stopOperator() {
      await manager?.stop();
      manager = undefined;
    },
    async startOperator() {
      manager = await startTestOperator(kubeConfig, namespace, bed.addressing, log, (m) => {
        if (options.backups)
          addEtcdBackupController(m, {
            addressing: bed.addressing,
            etcdCallTimeoutMs: 2000,
            waitIntervalMs: 300,
          });
        options.addControllers?.(m, bed);
      });
    },
  };

  beforeAll(async () => {
    // The operator watches EtcdBackups too (disaster recovery reads them), so both CRDs.
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), `homeostat-etcd-${options.label}-`));
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    await bed.startOperator();
  });

  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    const warnings = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
    const clusters = (await client.list(etcdClusters, { namespace }).catch(() => undefined))?.items ?? [];
    const backups = (await client.list(etcdBackups, { namespace }).catch(() => undefined))?.items ?? [];
    const pods = (await client.list(builtin.pods, { namespace }).catch(() => undefined))?.items ?? [];
    const statusOf = (objects: readonly { metadata?: { name?: string }; status?: unknown }[]) =>
      Object.fromEntries(objects.map((o) => [o.metadata?.name ?? '', o.status]));
    console.warn(
      JSON.stringify(
        {
          operatorLog: warnings,
          clusters: statusOf(clusters),
          backups: statusOf(backups),
          runner: runner?.describe(),
          // As the pods' status says it (what the tests wait on): Ready, and each container's start.
          pods: pods.map((p) => ({
            name: p.metadata?.name,
            uid: p.metadata?.uid,
            ready: p.status?.conditions?.find((c) => c.type === 'Ready')?.status,
            started: p.status?.containerStatuses?.map((c) => c.state?.running?.startedAt),
          })),
        },
        null,
        1,
      ),
    );
  });

  afterAll(async () => {
    await garbageCollector.stop();
    await manager?.stop();
    await runner?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  return bed;
}

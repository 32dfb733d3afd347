// npm run bench:chaos:etcd [-- --faults N] [--seed S] [--kinds a,b] [--cluster kind]: the etcd
// operator's promises under faults, as figures. The operator is installed from its chart into a
// namespace of its own on the cluster in KUBECONFIG (or the local cluster, brought up or reused
// with its images, as `npm run e2e` does; or, with `--cluster kind`, a kind cluster of three
// workers, where the operator and the S3 server run on the control-plane node, the members are
// spread over the workers, and a member's node may be stopped); one EtcdCluster of three members backs up to a real S3 server in the
// cluster and may restore its newest backup 10 s after it believes quorum lost
// (`onQuorumLoss: RestoreNewestBackup`, the setting that could destroy a healthy cluster). A
// write load puts keys through the client Service over TLS and records every acknowledged put.
// Then N faults (default 50; 2 under BENCH_SMOKE=1) drawn at random from chaos-faults.ts, each
// once the cluster is healthy again. It prints one line per fault, then one JSON line:
// acknowledged writes lost (the promise: 0), healthy clusters destroyed (a restore, seen as a new
// etcd cluster ID: 0), moments where etcd's member list differed from the pods after convergence
// (0), whether the cluster came back by itself after every fault, and the time to healthy again
// per fault kind. It asserts nothing.
import { waitUntil } from '@homeostat/testing';
import { apply, kubectl, listObjects } from '../../e2e/harness/cluster-access.ts';
import { writeOutageSeconds } from '../../e2e/harness/acknowledged-writes.ts';
import { etcdClientTarget, presentIds, startEtcdWriteLoad } from '../../e2e/harness/etcd-client.ts';
import {
  etcdMemberList,
  getEtcdCluster,
  memberSelector,
  waitForBackup,
  waitForMembers,
} from '../../e2e/harness/etcd-clusters.ts';
import { operatorCharts } from '../../e2e/harness/operator-charts.ts';
import { installOperator } from '../../e2e/harness/operator-release.ts';
import { deployS3Server } from '../../e2e/harness/s3-server.ts';
import { onControlPlanePlacement, onControlPlaneValues } from '../../e2e/harness/stoppable-node.ts';
import { createTestNamespace } from '../../e2e/harness/test-namespace.ts';
import type { V1Pod } from '@kubernetes/client-node';
import { chaosRun, firstLine, max, median } from '../support/chaos-run.ts';
import { loadAverage } from '../support/load-average.ts';
import { supportedVersions } from '@homeostat/etcd-operator';
import { causeFault, faultKinds, nodeStopKinds, oneShotKinds, type FaultKind } from './chaos-faults.ts';

// The smoke run causes a cheap fault and the one that could destroy a healthy cluster, so CI
// proves the harness (and that promise) end to end.
const { faultCount, seed, kinds, random, teardown, onMultiNodeKind, nodes, setUp } = await chaosRun(
  'bench:chaos:etcd',
  {
    all: faultKinds,
    smoke: ['member-pod-force-deleted', 'operator-cut-off-from-members'],
    nodeStops: nodeStopKinds,
  },
);
/** How long the cluster has to be healthy again after a fault before it counts as not recovered. */
const recoveryTimeoutMs = 300_000;
const recoveryAfterSeconds = 10;

interface FaultResult {
  kind: FaultKind;
  /** From the fault to the first put acknowledged after puts began to fail (0: none failed). */
  writesBackSeconds: number;
  /** From the fault to every member a ready voter again, members equal to pods. */
  healthySeconds: number;
  recovered: boolean;
  problem?: string;
}

const namespace = await createTestNamespace('bench-chaos-etcd');
const ns = namespace.name;
teardown.add(`delete namespace ${ns}`, () => namespace.remove());
const bucket = 'chaos';
// On kind the S3 server and the operator run on the control-plane node, which no fault stops: a
// backup or a restore never waits for a stopped worker.
const s3 = await setUp(() =>
  deployS3Server([bucket], onMultiNodeKind ? { placement: onControlPlanePlacement() } : {}),
);
teardown.add('remove the S3 server', () => s3.remove());
const operator = await setUp(() =>
  installOperator(operatorCharts.etcd, ns, onMultiNodeKind ? onControlPlaneValues() : {}),
);
teardown.add('uninstall the operator', () => operator.cleanup());
const name = 'chaos';
let size = 3;
// The oldest supported version first, so an upgrade fault has somewhere to go.
const [oldestVersion, newestVersion] = [supportedVersions[0] ?? '', supportedVersions.at(-1) ?? ''];
const target = await setUp(async () => {
  await s3.credentialsSecret(ns, 'backup-bucket');
  await apply([
    {
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name, namespace: ns },
      spec: {
        size,
        version: oldestVersion,
        storage: { size: '1Gi' },
        resources: { requests: { cpu: '20m', memory: '64Mi' } },
        backup: {
          destination: {
            s3: {
              bucket,
              prefix: 'chaos/',
              endpoint: s3.endpoint,
              region: s3.region,
              forcePathStyle: true,
              credentialsSecretName: 'backup-bucket',
            },
          },
        },
        recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds: recoveryAfterSeconds },
      },
    },
  ]);
  await waitForMembers(ns, name, size);
  return etcdClientTarget(ns, name);
});
const prefix = 'acked/';
const load = startEtcdWriteLoad(target, prefix);
teardown.add('stop the write load', () => load.stop());
await setUp(() => waitUntil('puts flowing', async () => load.acked.length >= 100, { timeoutMs: 60_000 }));
// A backup before any fault: without one a recovery would have nothing to restore, and a cut-off
// operator that wrongly restored the cluster could not show up as a destroyed cluster.
await setUp(async () => {
  await apply([
    {
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdBackup',
      metadata: { name: `${name}-before-faults`, namespace: ns },
      spec: { clusterName: name },
    },
  ]);
  await waitForBackup(ns, `${name}-before-faults`);
});
const clusterId = (await getEtcdCluster(ns, name))?.status?.clusterId;

/** etcd's own member list against the member pods, by name: empty when they agree. */
async function membersVersusPods(): Promise<string> {
  const pods = (await listObjects<V1Pod>('pods', ns, memberSelector(name)))
    .map((p) => p.metadata?.name ?? '')
    .sort();
  const members = (await etcdMemberList(ns, pods[0] ?? `${name}-0`)).map((m) => m.name).sort();
  return members.join(',') === pods.join(',') ? '' : `members ${members.join(',')}, pods ${pods.join(',')}`;
}

/** Prints the pods, the recent Events and the operator's last log lines: why a cluster is stuck. */
async function explainStuck(result: FaultResult): Promise<void> {
  const show = async (what: string, args: string[]) =>
    console.error(`--- ${what}\n${await kubectl(['-n', ns, ...args]).catch((e: unknown) => String(e))}`);
  console.error(`--- ${result.kind} left the cluster unhealthy: ${result.problem ?? ''}`);
  await show('pods', ['get', 'pods', '-o', 'wide']);
  await show('events', ['get', 'events', '--sort-by=.lastTimestamp']);
  await show('the cluster', ['get', 'etcdcluster', name, '-o', 'yaml']);
  await show('the operator', ['logs', '-l', `app.kubernetes.io/instance=${operator.release}`, '--tail=80']);
}

console.error(
  `bench:chaos:etcd: ${faultCount} faults from ${kinds.join(', ')} (seed ${seed}), load ${loadAverage()}`,
);
const results: FaultResult[] = [];
const used = new Set<FaultKind>();
const mismatches: string[] = [];
let destroyed = 0;
for (let i = 0; i < faultCount; i++) {
  const available = kinds.filter((k) => !(oneShotKinds.includes(k) && used.has(k)));
  const kind = available[Math.floor(random() * available.length)] ?? 'member-pod-force-deleted';
  used.add(kind);
  const at = Date.now();
  let result: FaultResult;
  try {
    const caused = await causeFault(kind, {
      namespace: ns,
      cluster: name,
      size,
      operatorRelease: operator.release,
      recoveryAfterSeconds,
      random,
      upgradeTo: newestVersion,
      backupName: `${name}-before-faults`,
      nodes,
    });
    size = caused.size;
    let { problem } = await caused.settle();
    let recovered = true;
    await waitForMembers(ns, name, size, { timeoutMs: recoveryTimeoutMs }).catch((error: unknown) => {
      recovered = false;
      problem = firstLine(error);
    });
    const healthySeconds = (Date.now() - at) / 1000;
    if (recovered) {
      const mismatch = await membersVersusPods().catch((error: unknown) => firstLine(error));
      if (mismatch) mismatches.push(`${kind}: ${mismatch}`);
    }
    await waitUntil(
      'puts acknowledged again',
      async () => writeOutageSeconds(load, at, Date.now()) !== undefined,
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch(() => undefined);
    const writesBackSeconds = writeOutageSeconds(load, at, Date.now()) ?? Number.NaN;
    result = { kind, writesBackSeconds, healthySeconds, recovered, ...(problem ? { problem } : {}) };
  } catch (error) {
    result = {
      kind,
      writesBackSeconds: Number.NaN,
      healthySeconds: Number.NaN,
      recovered: false,
      problem: firstLine(error),
    };
  }
  // A new etcd cluster ID means the operator made the cluster again from a backup: none of these
  // faults loses quorum, so every such restore destroyed a healthy cluster.
  const idNow = (await getEtcdCluster(ns, name).catch(() => undefined))?.status?.clusterId;
  if (idNow !== undefined && idNow !== clusterId) {
    destroyed++;
    result = { ...result, problem: `cluster ID ${clusterId ?? '?'} became ${idNow}` };
  }
  results.push(result);
  console.error(
    `fault ${i + 1}/${faultCount} ${kind}: puts back after ${result.writesBackSeconds.toFixed(2)} s, healthy after ${result.healthySeconds.toFixed(1)} s (size ${size})${result.problem ? `; ${result.problem}` : ''}${result.recovered ? '' : ' NOT RECOVERED'}`,
  );
  // A cluster that did not come back, or came back as another cluster, is left as it is with
  // what explains it: the next faults would measure nothing.
  if (!result.recovered || destroyed) {
    await explainStuck(result);
    await nodes.startAll();
    break;
  }
}

await load.stop();
const present = await presentIds(target, prefix).catch(() => undefined);
const lost = present ? load.acked.filter((w) => !present.has(w.id)).length : undefined;
const perKind = Object.fromEntries(
  kinds.map((kind) => {
    const of = results.filter((r) => r.kind === kind);
    const healthy = of.map((r) => r.healthySeconds).filter(Number.isFinite);
    const back = of.map((r) => r.writesBackSeconds).filter(Number.isFinite);
    return [
      kind,
      {
        faults: of.length,
        healthy_median_s: median(healthy),
        healthy_max_s: max(healthy),
        puts_back_max_s: max(back),
      },
    ];
  }),
);
const figures = {
  faults: results.length,
  seed,
  acknowledged_writes: load.acked.length,
  acknowledged_writes_lost: lost ?? 'unread',
  healthy_clusters_destroyed: destroyed,
  members_not_pods_after_convergence: mismatches.length,
  recovered_every_time: results.every((r) => r.recovered) && destroyed === 0,
  fault_problems: results.filter((r) => r.problem).map((r) => `${r.kind}: ${r.problem ?? ''}`),
  members_not_pods: mismatches,
  per_kind: perKind,
  load_average: loadAverage(),
};
// A run that lost a put, or left the cluster unrecovered, keeps what explains it.
if (figures.recovered_every_time && lost === 0) {
  await kubectl(['-n', ns, 'delete', 'etcdcluster', name, '--wait=true', '--timeout=120s']).catch(() => '');
  await teardown.run();
} else {
  console.error(
    `left namespace ${ns} as it is; remove it with: kubectl delete namespace ${ns} (and helm uninstall ${operator.release} -n ${ns}; the S3 server's namespace ${s3.namespace})`,
  );
}
process.stdout.write(`${JSON.stringify(figures)}\n`);

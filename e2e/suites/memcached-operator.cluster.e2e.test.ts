// Runs against the cluster in KUBECONFIG (kind, the local cluster, any other): the Memcached
// operator installed from its Helm chart, as a user installs it, into a namespace that enforces
// the `restricted` Pod Security Standard; then a Memcached's whole life: pods Ready, the published
// server list equal to the pods and each address answering, every pod replaced by `kubectl homeostat
// restart` while a client keeps working through the Service without one error, a value stored and
// read through its Service, scaled 3 → 4 keeping the first three pods and names, then 4 → 1 → 2, a
// second one with TLS and SASL that answers only authenticated TLS clients, a third one scaled by a
// HorizontalPodAutoscaler, deleted and garbage-collected, and the chart uninstalled. The operator's image is the one built from operators/Dockerfile.
import { randomBytes } from 'node:crypto';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operandImages } from '../images/image-names.ts';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import { createCertificateAuthority, issueCertificate } from '@homeostat/operator-kit/tls';
import { memcachedMetrics, memcachedSetGet, type SetGetResult } from '../harness/memcached-client.ts';
import { startMemcachedLoad } from '../harness/memcached-load.ts';
import { memcachedSecuredSession } from '../harness/memcached-secured-client.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { kubectlHomeostat } from '../harness/kubectl-homeostat.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady } from '../harness/workloads.ts';
import { kindClusterUnderTest } from '../harness/kind-nodes.ts';

const cacheName = 'cache';
const podSelector = `app.kubernetes.io/name=memcached,app.kubernetes.io/instance=${cacheName}`;
/** What the operator makes for the Memcached, each owned by it: kind and name. */
const ownedObjects = [
  ['statefulset', cacheName],
  ['service', cacheName],
  ['configmap', `${cacheName}-servers`],
  ['poddisruptionbudget', cacheName],
] as const;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface MemcachedObject {
  metadata: { uid: string; generation: number };
  spec: { size: number };
  status?: {
    readyReplicas?: number;
    nodes?: string[];
    selector?: string;
    servers?: string[];
    observedGeneration?: number;
    conditions?: Condition[];
  };
}
const condition = (m: MemcachedObject | undefined, type: string) =>
  m?.status?.conditions?.find((c) => c.type === type);

describe('Memcached operator from its Helm chart, on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;

  const memcached = () => getObject<MemcachedObject>('memcached', cacheName, ns);
  const pods = async () => listObjects<V1Pod>('pods', ns, podSelector);

  /** Waits until the Memcached and its pods all show `size` Ready pods. */
  async function waitForReadySize(size: number): Promise<MemcachedObject> {
    let last: MemcachedObject | undefined;
    let podNames: string[] = [];
    await waitUntil(
      `Memcached ${ns}/${cacheName} reports ${size} ready pods`,
      async () => {
        last = await memcached();
        const all = await pods();
        podNames = all.filter(isPodReady).map((p) => p.metadata?.name ?? '');
        return (
          last?.status?.observedGeneration === last?.metadata.generation &&
          last?.status?.readyReplicas === size &&
          all.length === size &&
          podNames.length === size &&
          condition(last, 'Available')?.status === 'True' &&
          condition(last, 'Progressing')?.status === 'False'
        );
      },
      {
        timeoutMs: 240_000,
        intervalMs: 1000,
        describe: () => `pods ready: [${podNames.join(', ')}]; status: ${JSON.stringify(last?.status)}`,
      },
    );
    if (!last) throw new Error('unreachable: waitUntil returned without a Memcached');
    expect([...(last.status?.nodes ?? [])].sort()).toEqual([...podNames].sort());
    return last;
  }

  async function eventReasons(): Promise<string[]> {
    const events = await listObjects<{ reason: string; regarding?: { name: string; kind: string } }>(
      'events.events.k8s.io',
      ns,
    );
    return events
      .filter((e) => e.regarding?.kind === 'Memcached' && e.regarding.name === cacheName)
      .map((e) => e.reason);
  }

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-memcached-operator');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.memcached, ns);
  });

  afterAll(async () => {
    await operator?.cleanup();
    await namespace?.remove();
  });

  it('passes `helm test`: the operator answers, reconciles the resource the test creates, and the test cleans up', async () => {
    await operator.passesHelmTest('memcacheds');
  });

  it('runs the operator Ready under the restricted Pod Security profile, with a read-only root filesystem', async () => {
    const operatorPods = await listObjects<V1Pod>(
      'pods',
      ns,
      `app.kubernetes.io/instance=${operator.release}`,
    );
    expect(operatorPods.length).toBe(1);
    const [pod] = operatorPods;
    expect(pod && isPodReady(pod)).toBe(true);
    expect(pod?.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(pod?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    const labels = (await getObject<{ metadata: { labels: Record<string, string> } }>('namespace', ns))
      ?.metadata.labels;
    expect(labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('rejects an invalid Memcached at the API server with a readable message', async () => {
    const invalid = {
      apiVersion: 'cache.homeostat.dev/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'invalid', namespace: ns },
      spec: { size: -1 },
    };
    await expect(apply([invalid])).rejects.toThrow(/spec\.size.*(greater than or equal to 0|should be)/);
  });

  it('runs a Memcached of 3 pods that become Ready, owning its StatefulSet, Service, server list and PodDisruptionBudget', async () => {
    await apply([
      {
        apiVersion: 'cache.homeostat.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name: cacheName, namespace: ns },
        spec: { size: 3, memoryLimitMB: 32 },
      },
    ]);
    const status = await waitForReadySize(3);
    expect(condition(status, 'Degraded')?.status).toBe('False');
    expect(status.status?.selector).toBe(podSelector);
    for (const [resource, name] of ownedObjects) {
      const owned = await getObject<V1StatefulSet>(resource, name, ns);
      expect(owned?.metadata?.ownerReferences, resource).toEqual([
        expect.objectContaining({
          kind: 'Memcached',
          name: cacheName,
          uid: status.metadata.uid,
          controller: true,
        }),
      ]);
    }
    expect((await getObject<V1StatefulSet>('statefulset', cacheName, ns))?.spec?.replicas).toBe(3);
    expect(await eventReasons()).toContain('StatefulSetCreated');
  });

  it('publishes one address per pod, in ordinal order, in status and in a ConfigMap; each answers', async () => {
    const names = (await pods()).map((p) => p.metadata?.name ?? '').sort();
    expect(names).toEqual([0, 1, 2].map((i) => `${cacheName}-${i}`));
    const servers = names.map((name) => `${name}.${cacheName}.${ns}.svc:11211`);
    expect((await memcached())?.status?.servers).toEqual(servers);
    const configMap = await getObject<{ data: Record<string, string> }>(
      'configmap',
      `${cacheName}-servers`,
      ns,
    );
    expect(configMap?.data['servers']).toBe(servers.join(','));
    expect(JSON.parse(configMap?.data['servers.json'] ?? '[]')).toEqual(servers);
    // Without the cluster domain: the client pod's resolver completes the name.
    for (const server of servers) {
      const host = server.replace(/:11211$/, '');
      const session = await memcachedSetGet({ namespace: ns, host, image: operandImages.memcached });
      expect(session.lines, `client pod (${session.phase}) talking to ${host}`).toEqual(session.expected);
    }
  });

  it('kubectl homeostat status: every Homeostat resource in the namespace, and the Memcached at a glance', async () => {
    expect(await kubectlHomeostat(['-n', ns, 'status'])).toMatch(
      new RegExp(`^KIND +NAME +PHASE\nMemcached +${cacheName}\\b`),
    );
    const status = await kubectlHomeostat(['-n', ns, 'status', `memcached/${cacheName}`]);
    expect(status).toMatch(new RegExp(`^${cacheName} \\(Memcached, namespace ${ns}\\)\n`));
    expect(status).toMatch(/\n {2}Available +True /);
    expect(status).toMatch(/\n {2}readyReplicas +3\n/);
  });

  it('the load client counts a round that gets no answer (a port nobody listens on) as a failure', async () => {
    const load = await startMemcachedLoad({
      namespace: ns,
      host: cacheName,
      port: 11299,
      image: operandImages.memcached,
    });
    const counted = await load.stop();
    expect(counted.ops).toBe(0);
    expect(counted.errors[0]).toMatch(/^error 1: no connection$/);
  });

  it('kubectl homeostat restart: every pod replaced under its name, a client through the Service seeing no error meanwhile', async () => {
    const before = new Set((await pods()).map((p) => p.metadata?.uid));
    // A new connection per set and get through the Service's name, as pods leave and come back.
    const load = await startMemcachedLoad({ namespace: ns, host: cacheName, image: operandImages.memcached });
    const output = await kubectlHomeostat([
      '-n',
      ns,
      'restart',
      `memcached/${cacheName}`,
      '--timeout',
      '300s',
    ]);
    expect(output).toMatch(
      new RegExp(`^Memcached ${cacheName}: rolling restart requested \\(homeostat.dev/restartedAt=`),
    );
    expect(output).toMatch(/every pod restarted and Ready \(3\), Available$/m);
    const counted = await load.stop();
    // A figure, not a bound: how much the client did while the pods were replaced.
    console.warn(
      `e2e: ${counted.ops} set/get rounds through the Service during the restart, ${counted.errors.length} failed`,
    );
    expect(counted.errors).toEqual([]);
    expect(counted.phase).toBe('Succeeded');
    expect(counted.ops).toBeGreaterThan(0);
    const requestedAt = /homeostat\.dev\/restartedAt=([^)]+)\)/.exec(output)?.[1];
    // The plugin has waited: no pod of before is left, and every one carries the request.
    const after = (await pods()).filter((p) => !p.metadata?.deletionTimestamp);
    expect(after.map((p) => p.metadata?.name).sort()).toEqual([0, 1, 2].map((i) => `${cacheName}-${i}`));
    for (const pod of after) {
      expect(before.has(pod.metadata?.uid)).toBe(false);
      expect(isPodReady(pod)).toBe(true);
      expect(pod.metadata?.annotations?.['homeostat.dev/restartedAt']).toBe(requestedAt);
    }
    expect(condition(await memcached(), 'Available')?.status).toBe('True');
    expect(await eventReasons()).toContain('RestartRequested');
  });

  it('stores and returns a value through its Service', async () => {
    for (const host of [cacheName, `${cacheName}.${ns}.svc.cluster.local`]) {
      const session = await memcachedSetGet({ namespace: ns, host, image: operandImages.memcached });
      expect(session.lines, `client pod (${session.phase}) talking to ${host}`).toEqual(session.expected);
      expect(session.phase).toBe('Succeeded');
    }
  });

  it("serves each pod's memcached stats from its metrics sidecar, the sessions' hits and misses counted", async () => {
    const ips = (await pods()).filter(isPodReady).map((p) => p.status?.podIP ?? '');
    expect(ips).toHaveLength(3);
    const { phase, series } = await memcachedMetrics({
      namespace: ns,
      hosts: ips,
      image: operandImages.memcached,
    });
    expect(phase).toBe('Succeeded');
    const sum = (name: string) => [...series.values()].reduce((total, s) => total + (s.get(name) ?? 0), 0);
    expect(ips.map((ip) => series.get(ip)?.get('memcached_up'))).toEqual([1, 1, 1]);
    // The two sessions above each got one hit and one miss, on whichever pods their keys went to.
    expect(sum('memcached_commands_total{command="get",status="hit"}')).toBeGreaterThanOrEqual(2);
    expect(sum('memcached_commands_total{command="get",status="miss"}')).toBeGreaterThanOrEqual(2);
  });

  it('scales 3 → 4 through the scale subresource: a fourth pod and address, the first three untouched', async () => {
    const before = (await pods()).map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort();
    const serversBefore = (await memcached())?.status?.servers ?? [];
    expect(serversBefore).toHaveLength(3);
    await kubectl(['-n', ns, 'scale', `memcached/${cacheName}`, '--replicas=4']);
    const status = await waitForReadySize(4);
    expect(status.status?.servers).toEqual([...serversBefore, `${cacheName}-3.${cacheName}.${ns}.svc:11211`]);
    const configMap = await getObject<{ data: Record<string, string> }>(
      'configmap',
      `${cacheName}-servers`,
      ns,
    );
    expect(configMap?.data['servers']).toBe(status.status?.servers?.join(','));
    // The same three pods (same uids) and a new cache-3: no key of theirs moved or was dropped.
    const after = (await pods()).map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort();
    expect(after.slice(0, 3)).toEqual(before);
    expect(after[3]).toMatch(new RegExp(`^${cacheName}-3/`));
  });

  it('scales 4 → 1 through the scale subresource, dropping the PodDisruptionBudget', async () => {
    await kubectl(['-n', ns, 'scale', `memcached/${cacheName}`, '--replicas=1']);
    expect((await memcached())?.spec.size).toBe(1);
    await waitForReadySize(1);
    expect((await getObject<V1StatefulSet>('statefulset', cacheName, ns))?.spec?.replicas).toBe(1);
    expect(await getObject('poddisruptionbudget', cacheName, ns)).toBeUndefined();
    expect(await eventReasons()).toEqual(
      expect.arrayContaining(['ScaledDown', 'PodDisruptionBudgetDeleted']),
    );
  });

  it('scales 1 → 2 through spec.size, bringing the PodDisruptionBudget back', async () => {
    await kubectl(['-n', ns, 'patch', 'memcached', cacheName, '--type=merge', '-p', '{"spec":{"size":2}}']);
    await waitForReadySize(2);
    expect((await getObject<V1StatefulSet>('statefulset', cacheName, ns))?.spec?.replicas).toBe(2);
    expect(await getObject('poddisruptionbudget', cacheName, ns)).toBeDefined();
    expect(await eventReasons()).toContain('ScaledUp');
    const session = await memcachedSetGet({ namespace: ns, host: cacheName, image: operandImages.memcached });
    expect(session.lines).toEqual(session.expected);
  });

  it('with spec.tls and spec.sasl, answers only TLS clients that authenticate, its sidecar still reading memcached', async () => {
    const sealed = 'sealed';
    const host = `${sealed}.${ns}.svc.cluster.local`;
    const ca = await createCertificateAuthority(`e2e-memcached-ca-${ns}`, 7);
    const server = await issueCertificate(ca, {
      commonName: host,
      dnsNames: [host, `${sealed}.${ns}.svc`],
      usages: ['server'],
      validDays: 7,
    });
    await apply([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${sealed}-tls`, namespace: ns },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': server.certificate, 'tls.key': server.privateKey, 'ca.crt': ca.certificate },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${sealed}-sasl`, namespace: ns },
        // With a trailing newline, as --from-file stores it: the operand drops it.
        stringData: { username: 'e2e', password: `${randomBytes(12).toString('hex')}\n` },
      },
      {
        apiVersion: 'cache.homeostat.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name: sealed, namespace: ns },
        spec: { size: 1, tls: { secretName: `${sealed}-tls` }, sasl: { secretName: `${sealed}-sasl` } },
      },
    ]);
    let last: MemcachedObject | undefined;
    await waitUntil(
      `Memcached ${ns}/${sealed} Available`,
      async () => {
        last = await getObject<MemcachedObject>('memcached', sealed, ns);
        return condition(last, 'Available')?.status === 'True' && last?.status?.readyReplicas === 1;
      },
      { timeoutMs: 240_000, intervalMs: 1000, describe: () => JSON.stringify(last?.status) },
    );

    const session = await memcachedSecuredSession({
      namespace: ns,
      host,
      ca: ca.certificate,
      saslSecret: `${sealed}-sasl`,
    });
    expect(session.phase).toBe('Succeeded');
    expect(session.lines).toEqual([
      'auth: 0',
      expect.stringMatching(/^version: 1\.6\.\d+$/),
      'wrong-auth: 32',
      'plain: none',
    ]);

    const [pod] = (
      await listObjects<V1Pod>(
        'pods',
        ns,
        `app.kubernetes.io/name=memcached,app.kubernetes.io/instance=${sealed}`,
      )
    ).filter(isPodReady);
    const ip = pod?.status?.podIP ?? '';
    const metrics = await memcachedMetrics({ namespace: ns, hosts: [ip], image: operandImages.memcached });
    expect(metrics.series.get(ip)?.get('memcached_up')).toBe(1);

    await kubectl(['-n', ns, 'delete', 'memcached', sealed, '--wait=true', '--timeout=120s']);
  });

  // The offline kind cluster's pod network (ptp routes, no policy agent) enforces no NetworkPolicy;
  // the local cluster's kube-router does (ADR 0504), as does any cluster whose network plugin does.
  it.skipIf(kindClusterUnderTest() !== undefined)(
    'with spec.networkPolicy, admits only the clients it names: an unlabelled client is refused until the field is removed',
    async () => {
      const guarded = 'guarded';
      const clientLabels = { role: 'cache-client' };
      const session = (labels?: Readonly<Record<string, string>>) =>
        memcachedSetGet({
          namespace: ns,
          host: guarded,
          image: operandImages.memcached,
          // A refused connection fails at once; this bounds one whose packets are dropped.
          connectTimeoutSeconds: 3,
          ...(labels ? { labels } : {}),
        });
      const works = (result: SetGetResult | undefined) =>
        result?.phase === 'Succeeded' && result.lines.join('\n') === result.expected.join('\n');
      const spec = { size: 1, memoryLimitMB: 16 };
      await apply([
        {
          apiVersion: 'cache.homeostat.dev/v1alpha1',
          kind: 'Memcached',
          metadata: { name: guarded, namespace: ns },
          spec: { ...spec, networkPolicy: { clients: [{ podSelector: { matchLabels: clientLabels } }] } },
        },
      ]);
      await waitUntil(
        `Memcached ${ns}/${guarded} Ready with its NetworkPolicy`,
        async () =>
          (await getObject<MemcachedObject>('memcached', guarded, ns))?.status?.readyReplicas === 1 &&
          (await getObject('networkpolicy.networking.k8s.io', guarded, ns)) !== undefined,
        { timeoutMs: 240_000, intervalMs: 1000 },
      );

      // The policy takes effect when the cluster's policy agent has seen it: until then an
      // unlabelled client still gets through, so wait for its first refusal.
      const created = Date.now();
      let unlabelled: SetGetResult | undefined;
      await waitUntil('an unlabelled client refused', async () => !works((unlabelled = await session())), {
        timeoutMs: 60_000,
        intervalMs: 500,
        describe: () => JSON.stringify(unlabelled),
      });
      // A figure, not a bound: how long the policy agent took to enforce a new policy.
      console.warn(`NetworkPolicy in force ${((Date.now() - created) / 1000).toFixed(1)} s after it existed`);
      expect(unlabelled?.phase).toBe('Failed');
      expect(unlabelled?.lines).not.toContain('set: STORED');

      // A labelled client may start before the agent has its address among the allowed sources;
      // it is retried until that happens, and must then store and read a value.
      let labelled: SetGetResult | undefined;
      await waitUntil(
        'a labelled client stores and reads a value',
        async () => works((labelled = await session(clientLabels))),
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          describe: () => JSON.stringify(labelled),
        },
      );
      expect(labelled?.lines).toEqual(labelled?.expected);
      // With the policy in force, once more unlabelled: refused, not a timing accident of the first.
      const again = await session();
      expect(again.phase, again.logs).toBe('Failed');

      // Without the field the policy goes, and the same unlabelled client gets through: the
      // refusals above were the policy's doing.
      await apply([
        {
          apiVersion: 'cache.homeostat.dev/v1alpha1',
          kind: 'Memcached',
          metadata: { name: guarded, namespace: ns },
          spec,
        },
      ]);
      await waitUntil(
        `NetworkPolicy ${ns}/${guarded} removed`,
        async () => (await getObject('networkpolicy.networking.k8s.io', guarded, ns)) === undefined,
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      let freed: SetGetResult | undefined;
      await waitUntil(
        'the unlabelled client served once the policy is gone',
        async () => works((freed = await session())),
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          describe: () => JSON.stringify(freed),
        },
      );
      expect(freed?.lines).toEqual(freed?.expected);
      await kubectl(['-n', ns, 'delete', 'memcached', guarded, '--wait=true', '--timeout=120s']);
    },
  );

  it('follows a HorizontalPodAutoscaler through the scale subresource: size 2 raised to minReplicas 3', async () => {
    const scaled = 'autoscaled';
    let last: MemcachedObject | undefined;
    const reaches = (size: number) =>
      waitUntil(
        `Memcached ${ns}/${scaled} at ${size} ready pods and servers`,
        async () => {
          last = await getObject<MemcachedObject>('memcached', scaled, ns);
          return (
            last?.spec.size === size &&
            last.status?.readyReplicas === size &&
            last.status.servers?.length === size
          );
        },
        { timeoutMs: 240_000, intervalMs: 1000, describe: () => JSON.stringify(last) },
      );
    await apply([
      {
        apiVersion: 'cache.homeostat.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name: scaled, namespace: ns },
        spec: { size: 2, memoryLimitMB: 16 },
      },
    ]);
    await reaches(2);
    await apply([
      {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: scaled, namespace: ns },
        spec: {
          scaleTargetRef: { apiVersion: 'cache.homeostat.dev/v1alpha1', kind: 'Memcached', name: scaled },
          minReplicas: 3,
          maxReplicas: 5,
          // No metrics source is needed for this: below minReplicas the HPA scales up before it
          // reads any metric.
          metrics: [
            {
              type: 'Resource',
              resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
            },
          ],
        },
      },
    ]);
    await reaches(3);
    expect(last?.status?.servers).toEqual([0, 1, 2].map((i) => `${scaled}-${i}.${scaled}.${ns}.svc:11211`));
    const hpa = await getObject<{ status?: { desiredReplicas?: number } }>(
      'horizontalpodautoscaler.autoscaling',
      scaled,
      ns,
    );
    expect(hpa?.status?.desiredReplicas).toBe(3);
    await kubectl(['-n', ns, 'delete', 'horizontalpodautoscaler.autoscaling', scaled, '--wait=true']);
    await kubectl(['-n', ns, 'delete', 'memcached', scaled, '--wait=true', '--timeout=120s']);
  });

  it('leaves nothing behind when the Memcached is deleted: the garbage collector removes what it owned', async () => {
    await kubectl(['-n', ns, 'delete', 'memcached', cacheName, '--wait=true', '--timeout=120s']);
    let left: string[] = [];
    await waitUntil(
      `StatefulSet, Service, ConfigMap, PodDisruptionBudget and pods of ${ns}/${cacheName} garbage-collected`,
      async () => {
        left = [];
        for (const [resource, name] of ownedObjects) {
          if (await getObject(resource, name, ns)) left.push(resource);
        }
        left.push(...(await pods()).map((p) => `pod/${p.metadata?.name ?? ''}`));
        return left.length === 0;
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => `still there: ${left.join(', ')}` },
    );
  });

  it('uninstalls with Helm, removing the operator and keeping the CRD', async () => {
    await operator.uninstall();
    expect(await getObject('deployment', operator.release, ns)).toBeUndefined();
    expect(await getObject('serviceaccount', operator.release, ns)).toBeUndefined();
    expect(await getObject('role', operator.release, ns)).toBeUndefined();
    // helm.sh/resource-policy: keep: uninstalling never takes every Memcached in the cluster with it.
    expect(await getObject('customresourcedefinition', operatorCharts.memcached.crds[0])).toBeDefined();
  });
});

// Runs the Memcached operator against a real kube-apiserver + etcd. There is no kubelet and no
// kube-controller-manager: the tests write StatefulSet and pod status themselves, and check what
// the operator makes of it.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { binaryPath, consistently, installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig, sharedKubeconfigPath } from '@homeostat/testing/shared';
import {
  builtin,
  controllerReference,
  findCondition,
  KubeClient,
  type Condition,
  type Manager,
} from '@homeostat/reconcile';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { memcachedCrd } from '../api/memcached-crd.ts';
import { memcacheds, type Memcached } from '../api/memcached-types.ts';
import { memcachedOperator } from '../operator.ts';
import { createMemcached, createOperandPod, eventsAbout } from '../test-support/memcached-fixtures.ts';
import { tlsSecretData } from '../test-support/pod-memcached.ts';
import { operandLabels, selectorLabels } from './operand-labels.ts';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';

// kubectl as a user runs it, reading the manifest from stdin; throws with its stderr.
async function kubectlInput(args: string[], input: string): Promise<string> {
  const result = spawnSync(binaryPath('kubectl'), [`--kubeconfig=${sharedKubeconfigPath()}`, ...args], {
    input,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const kubeConfig = sharedKubeConfig();
const namespace = `memcached-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const operatorImage = 'registry.example.test/memcached:1.6-test';
const poll = { timeoutMs: 30_000 };

const get = (name: string) => client.get(memcacheds, name, namespace);
const statefulSetOf = (name: string) => client.find(builtin.statefulSets, name, namespace);
const condition = (m: Memcached | undefined, type: string): Condition | undefined =>
  findCondition(m?.status?.conditions, type);

/**
 * Writes the status the StatefulSet controller would (none runs here): `size` pods of the latest
 * generation, `ready` of them Ready.
 */
async function writeStatefulSetReady(name: string, size: number, ready: number) {
  const generation = (await statefulSetOf(name))?.metadata?.generation;
  return client.patchStatus(builtin.statefulSets, name, namespace, {
    observedGeneration: generation,
    replicas: size,
    updatedReplicas: size,
    readyReplicas: ready,
    availableReplicas: ready,
  });
}

describe('Memcached operator on a real kube-apiserver + etcd', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager;

  beforeAll(async () => {
    await installCrds(kubeConfig, [memcachedCrd]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    // Pods need their ServiceAccount; without a kube-controller-manager nobody creates "default".
    await client.create(builtin.serviceAccounts, { metadata: { name: 'default', namespace } });
    manager = memcachedOperator(
      kubeConfig,
      testOperatorConfig({ watchNamespaces: [namespace], memcachedImage: operatorImage }),
      { logger: log, bindAddress: '127.0.0.1' },
    );
    await manager.start();
  });

  afterAll(async () => {
    await manager?.stop();
    client.close();
  });

  it('creates a StatefulSet, a headless Service, a server-list ConfigMap and a PDB owned by the Memcached', async () => {
    const created = await createMemcached(client, 'alpha', namespace, { size: 3, memoryLimitMB: 128 });
    expect(created.spec).toMatchObject({ size: 3, port: 11211, memoryLimitMB: 128 }); // API server defaults
    await waitUntil(
      'alpha StatefulSet, Service, ConfigMap and PDB',
      async () =>
        Boolean(
          (await statefulSetOf('alpha')) &&
          (await client.find(builtin.services, 'alpha', namespace)) &&
          (await client.find(builtin.configMaps, 'alpha-servers', namespace)) &&
          (await client.find(builtin.podDisruptionBudgets, 'alpha', namespace)),
        ),
      poll,
    );
    const owner = {
      apiVersion: 'cache.homeostat.dev/v1alpha1',
      kind: 'Memcached',
      name: 'alpha',
      uid: created.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    };

    const statefulSet = (await statefulSetOf('alpha')) as V1StatefulSet;
    expect(statefulSet.metadata?.ownerReferences).toEqual([owner]);
    // Pods alpha-0 … alpha-2, each with a DNS name through the headless Service alpha.
    expect(statefulSet.spec).toMatchObject({
      replicas: 3,
      serviceName: 'alpha',
      podManagementPolicy: 'Parallel',
    });
    const pod = statefulSet.spec?.template.spec;
    const container = pod?.containers[0];
    expect(container?.image).toBe(operatorImage);
    expect(container?.args).toEqual(['-p', '11211', '-U', '0', '-m', '128']);
    expect(container?.resources).toEqual({
      requests: { cpu: '50m', memory: '160Mi' },
      limits: { memory: '160Mi' },
    });
    // Pod Security "restricted": non-root, seccomp RuntimeDefault, no escalation, no capabilities.
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.readinessProbe?.tcpSocket?.port).toBe('memcached');
    expect(container?.livenessProbe?.tcpSocket?.port).toBe('memcached');

    const service = await client.get(builtin.services, 'alpha', namespace);
    expect(service.metadata?.ownerReferences).toEqual([owner]);
    expect(service.spec?.clusterIP).toBe('None');
    expect(service.spec?.ports?.[0]).toMatchObject({ port: 11211, targetPort: 'memcached' });
    expect(service.spec?.selector).toEqual(statefulSet.spec?.selector.matchLabels);

    const pdb = await client.get(builtin.podDisruptionBudgets, 'alpha', namespace);
    expect(pdb.metadata?.ownerReferences).toEqual([owner]);
    expect(pdb.spec?.maxUnavailable).toBe(1);
    expect(pdb.spec?.selector?.matchLabels).toEqual(statefulSet.spec?.selector.matchLabels);

    const servers = [0, 1, 2].map((i) => `alpha-${i}.alpha.${namespace}.svc:11211`);
    const configMap = await client.get(builtin.configMaps, 'alpha-servers', namespace);
    expect(configMap.metadata?.ownerReferences).toEqual([owner]);
    expect(configMap.data).toEqual({ servers: servers.join(','), 'servers.json': JSON.stringify(servers) });
    await waitUntil('status.servers', async () => (await get('alpha')).status?.servers !== undefined, poll);
    expect((await get('alpha')).status?.servers).toEqual(servers);

    const events = await eventsAbout(client, namespace, 'alpha', 'StatefulSetCreated');
    expect(events[0]).toMatchObject({ type: 'Normal', reportingController: 'memcached-operator' });
  });

  it('makes no PDB for a single pod, and takes spec.image over the default', async () => {
    await createMemcached(client, 'solo', namespace, { image: 'example.test/memcached:custom' });
    await waitUntil('solo StatefulSet', async () => (await statefulSetOf('solo')) !== undefined, poll);
    const statefulSet = await statefulSetOf('solo');
    expect(statefulSet?.spec?.replicas).toBe(1);
    expect(statefulSet?.spec?.template.spec?.containers[0]?.image).toBe('example.test/memcached:custom');
    await waitUntil('solo status', async () => (await get('solo')).status?.observedGeneration === 1, poll);
    expect(await client.find(builtin.podDisruptionBudgets, 'solo', namespace)).toBeUndefined();
  });

  it('scales through the scale subresource (kubectl scale), with an Event, and drops the PDB at one pod', async () => {
    await createMemcached(client, 'scaled', namespace, { size: 2 });
    await waitUntil(
      'scaled PDB',
      async () => (await client.find(builtin.podDisruptionBudgets, 'scaled', namespace)) !== undefined,
      poll,
    );

    const scale = (await client.patch(
      memcacheds,
      'scaled',
      namespace,
      { spec: { replicas: 5 } },
      { subresource: 'scale' },
    )) as unknown as {
      spec: { replicas: number };
    };
    expect(scale.spec.replicas).toBe(5);
    await waitUntil(
      'StatefulSet scaled to 5',
      async () => (await statefulSetOf('scaled'))?.spec?.replicas === 5,
      poll,
    );
    await waitUntil(
      'ScaledUp event',
      async () => (await eventsAbout(client, namespace, 'scaled', 'ScaledUp')).length > 0,
      poll,
    );
    const [scaledUp] = await eventsAbout(client, namespace, 'scaled', 'ScaledUp');
    expect(scaledUp?.note).toBe('scaled from 2 to 5 pods');

    // The scale subresource reads the selector back from status.
    await waitUntil('status.selector', async () => Boolean((await get('scaled')).status?.selector), poll);
    const read = (await client.patch(
      memcacheds,
      'scaled',
      namespace,
      {},
      { subresource: 'scale' },
    )) as unknown as {
      status: { selector: string };
    };
    expect(read.status.selector).toBe('app.kubernetes.io/name=memcached,app.kubernetes.io/instance=scaled');

    await client.patch(memcacheds, 'scaled', namespace, { spec: { replicas: 1 } }, { subresource: 'scale' });
    await waitUntil(
      'StatefulSet scaled to 1',
      async () => (await statefulSetOf('scaled'))?.spec?.replicas === 1,
      poll,
    );
    await waitUntil(
      'PDB deleted',
      async () => (await client.find(builtin.podDisruptionBudgets, 'scaled', namespace)) === undefined,
      poll,
    );
    expect((await eventsAbout(client, namespace, 'scaled', 'ScaledDown'))[0]?.note).toBe(
      'scaled from 5 to 1 pods',
    );
  });

  it('publishes the ordered server list, growing and shrinking at the highest ordinal only', async () => {
    await createMemcached(client, 'listed', namespace, { size: 3, port: 11511 });
    const address = (i: number) => `listed-${i}.listed.${namespace}.svc:11511`;
    const published = async () => ({
      status: (await get('listed')).status?.servers,
      configMap: (await client.find(builtin.configMaps, 'listed-servers', namespace))?.data?.['servers'],
    });
    let last = {};
    const publishes = (size: number) =>
      waitUntil(
        `${size} servers published`,
        async () => {
          const { status, configMap } = (last = await published());
          const expected = Array.from({ length: size }, (_, i) => address(i));
          return JSON.stringify(status) === JSON.stringify(expected) && configMap === expected.join(',');
        },
        { ...poll, describe: () => JSON.stringify(last) },
      );
    await publishes(3);
    await client.patch(memcacheds, 'listed', namespace, { spec: { replicas: 4 } }, { subresource: 'scale' });
    await publishes(4);
    await client.patch(memcacheds, 'listed', namespace, { spec: { size: 2 } });
    await publishes(2);
    expect((await statefulSetOf('listed'))?.spec?.replicas).toBe(2);
  });

  it('moves a Memcached off the Deployment an older operator made, deleting it only once the StatefulSet serves', async () => {
    const created = await createMemcached(client, 'upgraded', namespace, { size: 2 });
    // What the operator before ADR 0404 left: a Deployment of the same name that it controls.
    const labels = operandLabels('upgraded');
    await client.create(builtin.deployments, {
      metadata: {
        name: 'upgraded',
        namespace,
        labels,
        ownerReferences: [controllerReference(created)],
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: selectorLabels('upgraded') },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'memcached', image: operatorImage }] },
        },
      },
    });
    await waitUntil(
      'the StatefulSet beside it',
      async () => (await statefulSetOf('upgraded')) !== undefined,
      poll,
    );
    const oldDeployment = () => client.find(builtin.deployments, 'upgraded', namespace);
    // No StatefulSet pod is Ready yet: the Deployment's pods keep serving.
    await consistently('the Deployment kept', async () => (await oldDeployment()) !== undefined, {
      forMs: 2000,
    });
    const writeStatefulSetStatus = (ready: number) => writeStatefulSetReady('upgraded', 2, ready);
    await writeStatefulSetStatus(1);
    await consistently(
      'the Deployment kept at 1 of 2 Ready',
      async () => (await oldDeployment()) !== undefined,
      {
        forMs: 2000,
      },
    );
    await writeStatefulSetStatus(2);
    await waitUntil('the Deployment deleted', async () => (await oldDeployment()) === undefined, poll);
    await waitUntil(
      'DeploymentReplaced announced',
      async () => (await eventsAbout(client, namespace, 'upgraded', 'DeploymentReplaced')).length > 0,
      poll,
    );
    expect((await statefulSetOf('upgraded'))?.spec?.replicas).toBe(2);
  });

  it('turns the StatefulSet status and its pods into the Memcached status and conditions', async () => {
    await createMemcached(client, 'status', namespace, { size: 3 });
    await waitUntil('status StatefulSet', async () => (await statefulSetOf('status')) !== undefined, poll);
    await waitUntil(
      'status written',
      async () => condition(await get('status'), 'Progressing') !== undefined,
      poll,
    );
    // Nothing has run yet: not available, progressing (scaling up from 0), not degraded.
    let memcached = await get('status');
    expect(condition(memcached, 'Available')).toMatchObject({
      status: 'False',
      reason: 'NotEnoughPodsReady',
      observedGeneration: 1,
    });
    expect(condition(memcached, 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingOut' });
    expect(condition(memcached, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });

    const writeStatefulSetStatus = (ready: number) => writeStatefulSetReady('status', 3, ready);

    // One of three ready: with maxUnavailable 1, two are needed.
    await createOperandPod(client, 'status', namespace, 'status-b', true);
    await createOperandPod(client, 'status', namespace, 'status-a', false);
    await writeStatefulSetStatus(1);
    await waitUntil('readyReplicas 1', async () => (await get('status')).status?.readyReplicas === 1, poll);
    memcached = await get('status');
    expect(memcached.status).toMatchObject({ replicas: 3, readyReplicas: 1, nodes: ['status-b'] });
    // What the pods-missing alerts compare, on the operator's own /metrics.
    expect(await cacheGauge(manager, 'memcached_cache_pods_desired', 'status')).toBe(3);
    expect(await cacheGauge(manager, 'memcached_cache_pods_ready', 'status')).toBe(1);
    expect(condition(memcached, 'Available')).toMatchObject({
      status: 'False',
      message: '1 of 3 pods ready; 2 needed',
    });
    expect(condition(memcached, 'Progressing')).toMatchObject({ status: 'True', reason: 'WaitingForPods' });

    // All three ready: available, rollout complete.
    await createOperandPod(client, 'status', namespace, 'status-c', true);
    await client.patchStatus(builtin.pods, 'status-a', namespace, {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
    });
    await writeStatefulSetStatus(3);
    await waitUntil(
      'Available',
      async () => condition(await get('status'), 'Available')?.status === 'True',
      poll,
    );
    await waitUntil('all nodes listed', async () => (await get('status')).status?.nodes?.length === 3, poll);
    memcached = await get('status');
    expect(memcached.status).toMatchObject({ readyReplicas: 3, nodes: ['status-a', 'status-b', 'status-c'] });
    expect(await cacheGauge(manager, 'memcached_cache_pods_ready', 'status')).toBe(3);
    expect(condition(memcached, 'Available')).toMatchObject({ reason: 'MinimumPodsReady' });
    expect(condition(memcached, 'Progressing')).toMatchObject({ status: 'False', reason: 'Complete' });
  });

  it('causes no writes once converged, however often it reconciles', async () => {
    await createMemcached(client, 'steady', namespace, { size: 2 });
    await waitUntil(
      'steady converged',
      async () => (await get('steady')).status?.observedGeneration === 1,
      poll,
    );
    await waitUntil(
      'steady objects cached',
      async () =>
        manager.cache.informer(builtin.podDisruptionBudgets).store.get(`${namespace}/steady`) !== undefined &&
        manager.cache.informer(memcacheds).store.get(`${namespace}/steady`)?.status?.observedGeneration === 1,
      poll,
    );
    await sleep(1000); // let the echo of the last write reach the cache
    const writes = () =>
      ['POST', 'PUT', 'PATCH', 'DELETE'].reduce(
        (sum, verb) => sum + (manager.client.transport.counts[verb] ?? 0),
        0,
      );
    const before = writes();
    const controller = manager.controllerNamed('memcached');
    for (let i = 0; i < 5; i++) {
      const count = await reconcileCount(manager);
      controller?.enqueue({ namespace, name: 'steady' });
      await waitUntil(`reconcile ${i + 1}`, async () => (await reconcileCount(manager)) > count, poll);
    }
    await sleep(300);
    expect(writes()).toBe(before);
  });

  it('rolls the pods on a restart request (homeostat.dev/restartedAt), and only then', async () => {
    await createMemcached(client, 'restarted', namespace, { size: 2 });
    await waitUntil(
      'restarted converged',
      async () => (await get('restarted')).status?.observedGeneration === 1,
      poll,
    );
    const templateAnnotations = async () =>
      (await statefulSetOf('restarted'))?.spec?.template.metadata?.annotations;
    const annotate = (annotations: Record<string, string | null>) =>
      client.patch(memcacheds, 'restarted', namespace, { metadata: { annotations } });
    expect(await templateAnnotations()).toBeUndefined();

    // Another annotation asks for nothing: the template keeps none.
    await annotate({ 'example.test/note': 'x' });
    await consistently('no template annotation', async () => (await templateAnnotations()) === undefined, {
      forMs: 2000,
    });

    // An annotation leaves the generation as it is: only the predicate on it wakes the controller.
    for (const value of ['2026-11-28T01:00:00Z', '2026-11-28T02:00:00Z']) {
      await annotate({ [restartedAtAnnotation]: value });
      await waitUntil(
        `template carries ${value}`,
        async () => (await templateAnnotations())?.[restartedAtAnnotation] === value,
        poll,
      );
    }
    expect((await get('restarted')).metadata?.generation).toBe(1);
    const events = await eventsAbout(client, namespace, 'restarted', 'RestartRequested');
    expect(events.map((e) => e.note).sort()).toEqual([
      expect.stringContaining('2026-11-28T01:00:00Z'),
      expect.stringContaining('2026-11-28T02:00:00Z'),
    ]);
  });

  it('removes a nodeSelector and a toleration the user dropped from the spec', async () => {
    await createMemcached(client, 'placed', namespace, {
      size: 1,
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'cache', effect: 'NoSchedule' }],
    });
    const podSpec = async () =>
      (await client.find(builtin.statefulSets, 'placed', namespace))?.spec?.template.spec;
    await waitUntil(
      'placement reaches the StatefulSet',
      async () => (await podSpec())?.nodeSelector?.['disk'] === 'ssd',
      poll,
    );
    expect((await podSpec())?.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'cache', effect: 'NoSchedule' },
    ]);
    // The StatefulSet still holds every field the new desired one sets: only field ownership shows
    // that the two the user removed must go.
    await client.patch(memcacheds, 'placed', namespace, { spec: { nodeSelector: null, tolerations: null } });
    await waitUntil(
      'placement removed from the StatefulSet',
      async () => {
        const spec = await podSpec();
        return spec?.nodeSelector === undefined && spec?.tolerations === undefined;
      },
      poll,
    );
  });

  it('accepts the sample CR through kubectl as written, alone and in a List: defaults fill in what it leaves out', async () => {
    // kubectl checks a List's items against the CRD's OpenAPI itself (as kubectl < 1.25 checked
    // everything); a defaulted field listed as required would make it refuse the sample.
    const sample = parse(
      readFileSync(new URL('../../config/samples/memcached.yaml', import.meta.url), 'utf8'),
    ) as Memcached;
    for (const manifest of [sample, { apiVersion: 'v1', kind: 'List', items: [sample] }]) {
      const out = await kubectlInput(
        ['--namespace', namespace, 'apply', '--server-side', '--dry-run=server', '-f', '-', '-o', 'json'],
        JSON.stringify(manifest),
      );
      const applied = JSON.parse(out) as Memcached | { items: Memcached[] };
      const spec = 'items' in applied ? applied.items[0]?.spec : applied.spec;
      expect(spec, manifest.kind).toMatchObject({
        size: 3,
        port: 11211,
        podDisruptionBudget: { enabled: true },
      });
    }
  });

  it('rejects invalid Memcacheds at the API server with messages a user understands', async () => {
    const rejection = async (name: string, spec: Record<string, unknown> | undefined) => {
      try {
        await client.create(memcacheds, {
          metadata: { name, namespace },
          ...(spec ? { spec } : {}),
        } as Memcached);
      } catch (error) {
        return String((error as Error).message);
      }
      throw new Error(`${name} was accepted`);
    };
    expect(await rejection('neg', { size: -1 })).toContain(
      'spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0',
    );
    expect(await rejection('huge', { size: 1000 })).toContain(
      'spec.size in body should be less than or equal to 64',
    );
    expect(await rejection('lowport', { port: 80 })).toContain(
      'spec.port in body should be greater than or equal to 1024',
    );
    expect(
      await rejection('tight', { memoryLimitMB: 256, resources: { limits: { memory: '256Mi' } } }),
    ).toContain(
      'spec.resources.limits.memory: Invalid value: resources.limits.memory must be larger than memoryLimitMB',
    );
    expect(await rejection('notq', { resources: { requests: { cpu: 'lots' } } })).toContain(
      'spec.resources.requests.cpu: Invalid value: "lots": must be a Kubernetes quantity such as 128Mi, 1Gi, 250m or 1',
    );
    expect(
      await rejection('inverted', { resources: { requests: { cpu: '2' }, limits: { cpu: '500m' } } }),
    ).toContain('resources.requests.cpu must not be larger than resources.limits.cpu');
    expect(await rejection('badtol', { tolerations: [{ operator: 'Maybe' }] })).toContain(
      'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Exists", "Equal"',
    );
    expect(await rejection('nospec', undefined)).toContain('spec: Required value: spec is required');
    expect(await rejection('9lives', {})).toContain(
      'metadata.name: Invalid value: metadata.name must be lowercase letters, digits and "-", starting with a letter',
    );
    // The StatefulSet labels its pods <name>-<revision hash>: a longer name would make no pods.
    expect(await rejection('x'.repeat(53), {})).toContain('metadata.name: Too long: may not be more than 52');
    expect(await rejection('pdb', { podDisruptionBudget: { maxUnavailable: 0 } })).toContain(
      'spec.podDisruptionBudget.maxUnavailable in body should be greater than or equal to 1',
    );
    expect(await rejection('noclients', { networkPolicy: { clients: [] } })).toContain(
      'spec.networkPolicy.clients: Invalid value: networkPolicy.clients must name at least one client: with none, no pod could reach the cache',
    );
    expect(await rejection('emptyclient', { networkPolicy: { clients: [{}] } })).toContain(
      'spec.networkPolicy.clients[0]: Invalid value: each client needs a podSelector, a namespaceSelector or both',
    );
    const expression = (e: Record<string, unknown>) => ({
      networkPolicy: { clients: [{ podSelector: { matchExpressions: [e] } }] },
    });
    expect(await rejection('novalues', expression({ key: 'app', operator: 'In' }))).toContain(
      'spec.networkPolicy.clients[0].podSelector.matchExpressions[0].values: Invalid value: values must name at least one value for the operators In and NotIn',
    );
    expect(
      await rejection('extravalues', expression({ key: 'app', operator: 'Exists', values: ['web'] })),
    ).toContain('values must be empty for the operators Exists and DoesNotExist');
    expect(await rejection('badop', expression({ key: 'app', operator: 'Like' }))).toContain(
      'spec.networkPolicy.clients[0].podSelector.matchExpressions[0].operator: Unsupported value: "Like"',
    );
    const selector = (podSelector: Record<string, unknown>) => ({
      networkPolicy: { clients: [{ podSelector }] },
    });
    expect(await rejection('spacedvalue', selector({ matchLabels: { app: 'web shop' } }))).toContain(
      'spec.networkPolicy.clients[0].podSelector.matchLabels.app in body should match',
    );
    expect(await rejection('spacedkey', selector({ matchLabels: { 'app web': 'x' } }))).toContain(
      'label keys must be a name of letters, digits',
    );
    expect(
      await rejection(
        'dashvalue',
        selector({ matchExpressions: [{ key: 'app', operator: 'In', values: ['web-'] }] }),
      ),
    ).toContain(
      'spec.networkPolicy.clients[0].podSelector.matchExpressions[0].values[0] in body should match',
    );
    expect(await rejection('badspread', { spread: { policy: 'Always' } })).toContain(
      'spec.spread.policy: Unsupported value: "Always": supported values: "Preferred", "Required", "Disabled"',
    );
    expect(await rejection('clash', { port: 9150 })).toContain(
      "spec.port: Invalid value: port 9150 is the metrics sidecar's: choose another port, or set exporter.enabled to false",
    );
    expect(await rejection('longdrain', { shutdown: { drainSeconds: 3600 } })).toContain(
      'spec.shutdown.drainSeconds in body should be less than or equal to 300',
    );
    expect(await rejection('tlsnoname', { tls: {} })).toContain('spec.tls.secretName: Required value');
    expect(await rejection('tlsempty', { tls: { secretName: '' } })).toContain(
      'spec.tls.secretName: Invalid value: "": spec.tls.secretName in body should be at least 1 chars long',
    );
    expect(await rejection('tlsbadname', { tls: { secretName: 'Cache_TLS' } })).toContain(
      "spec.tls.secretName: Invalid value: \"Cache_TLS\": tls.secretName must be a Secret's name: lowercase letters, digits, '-' and '.'",
    );
    expect(await rejection('saslnoname', { sasl: {} })).toContain('spec.sasl.secretName: Required value');
    expect(await rejection('saslbadname', { sasl: { secretName: 'creds-' } })).toContain(
      'spec.sasl.secretName: Invalid value: "creds-": sasl.secretName must be a Secret\'s name',
    );
    expect(await rejection('statsclash', { port: 9151, tls: { secretName: 'cache-tls' } })).toContain(
      'spec.port: Invalid value: port 9151 is where the metrics sidecar reads statistics when tls is set',
    );
  });

  it('leaves the pods alone while a Secret spec.tls or spec.sasl names is missing or incomplete, saying so without its values', async () => {
    const password = 'never-in-status-or-events';
    const touch = async (memoryLimitMB: number) =>
      // Secrets are read, not watched: a spec change makes the operator look again at once.
      client.patch(memcacheds, 'secured', namespace, { spec: { memoryLimitMB } }, { patchType: 'merge' });
    await createMemcached(client, 'secured', namespace, {
      tls: { secretName: 'secured-tls' },
      sasl: { secretName: 'secured-sasl' },
    });
    await waitUntil(
      'Degraded SecretMissing',
      async () => condition(await get('secured'), 'Degraded')?.reason === 'SecretMissing',
      poll,
    );
    expect(condition(await get('secured'), 'Degraded')?.message).toBe(
      `Secret secured-tls (spec.tls.secretName) does not exist in namespace ${namespace}; the pods are left as they are until it does`,
    );
    expect(await statefulSetOf('secured')).toBeUndefined();
    await waitUntil(
      'SecretMissing event',
      async () => (await eventsAbout(client, namespace, 'secured', 'SecretMissing')).length > 0,
      poll,
    );
    expect((await eventsAbout(client, namespace, 'secured', 'SecretMissing'))[0]?.type).toBe('Warning');

    const b64 = (text: string) => Buffer.from(text).toString('base64');
    await client.create(builtin.secrets, {
      metadata: { name: 'secured-tls', namespace },
      type: 'kubernetes.io/tls',
      // A real certificate and key: the operator checks that memcached could load them.
      data: await tlsSecretData(mkdtempSync(join(tmpdir(), 'homeostat-memcached-tls-secret-'))),
    });
    await client.create(builtin.secrets, {
      metadata: { name: 'secured-sasl', namespace },
      data: { username: b64('shop') },
    });
    await touch(65);
    await waitUntil(
      'Degraded SecretInvalid',
      async () => condition(await get('secured'), 'Degraded')?.reason === 'SecretInvalid',
      poll,
    );
    expect(condition(await get('secured'), 'Degraded')?.message).toBe(
      'Secret secured-sasl (spec.sasl.secretName) has no password (or an empty one); it needs username and password. The pods are left as they are until it does',
    );
    expect(await statefulSetOf('secured')).toBeUndefined();

    await client.patch(
      builtin.secrets,
      'secured-sasl',
      namespace,
      { data: { password: b64(password) } },
      { patchType: 'merge' },
    );
    await touch(66);
    await waitUntil('StatefulSet created', async () => (await statefulSetOf('secured')) !== undefined, poll);
    await waitUntil(
      'Degraded cleared',
      async () => condition(await get('secured'), 'Degraded')?.status === 'False',
      poll,
    );
    const template = (await statefulSetOf('secured'))?.spec?.template;
    const revision = template?.metadata?.annotations?.['cache.homeostat.dev/secret-revision'] ?? '';
    expect(revision).toMatch(/^tls=[-0-9a-f]+\/\S+,sasl=[-0-9a-f]+\/\S+$/);
    expect(template?.spec?.containers[0]?.args).toEqual(expect.arrayContaining(['-Z', '-S']));

    // A rotated password rolls the pods: the annotation moves with the Secret's version.
    await client.patch(
      builtin.secrets,
      'secured-sasl',
      namespace,
      { data: { password: b64(`${password}-2`) } },
      { patchType: 'merge' },
    );
    await touch(67);
    await waitUntil(
      'secret revision moved',
      async () =>
        ((await statefulSetOf('secured'))?.spec?.template.metadata?.annotations?.[
          'cache.homeostat.dev/secret-revision'
        ] ?? revision) !== revision,
      poll,
    );

    // Removing both rolls the pods back to plaintext without authentication.
    await client.patch(
      memcacheds,
      'secured',
      namespace,
      [
        { op: 'remove', path: '/spec/tls' },
        { op: 'remove', path: '/spec/sasl' },
      ],
      { patchType: 'json' },
    );
    await waitUntil(
      'plain pods',
      async () => (await statefulSetOf('secured'))?.spec?.template.spec?.volumes === undefined,
      poll,
    );
    const plain = (await statefulSetOf('secured'))?.spec?.template;
    expect(plain?.spec?.containers[0]?.args).not.toContain('-Z');
    expect(plain?.spec?.initContainers).toBeUndefined();
    expect(plain?.metadata?.annotations?.['cache.homeostat.dev/secret-revision']).toBeUndefined();

    const said = JSON.stringify([
      await get('secured'),
      (await client.list(builtin.events, { namespace })).items,
      lines,
    ]);
    expect(said).not.toContain(password);
    expect(said).not.toContain(b64(password));
  });

  it('admits only the named clients through a NetworkPolicy, and removes it when the field goes', async () => {
    await createMemcached(client, 'guarded', namespace, {
      size: 2,
      port: 11311,
      networkPolicy: {
        clients: [
          { podSelector: { matchLabels: { role: 'web' } } },
          {
            namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['shop'] }] },
            podSelector: {},
          },
        ],
      },
    });
    const policy = () => client.find(builtin.networkPolicies, 'guarded', namespace);
    await waitUntil('the NetworkPolicy', async () => (await policy()) !== undefined, poll);
    expect((await policy())?.spec).toEqual({
      podSelector: {
        matchLabels: { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': 'guarded' },
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            { podSelector: { matchLabels: { role: 'web' } } },
            {
              namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['shop'] }] },
              podSelector: {},
            },
          ],
          ports: [{ protocol: 'TCP', port: 11311 }],
        },
        // The metrics sidecar's port, from anywhere: counters only.
        { ports: [{ protocol: 'TCP', port: 9150 }] },
      ],
    });
    await client.patch(memcacheds, 'guarded', namespace, { spec: { networkPolicy: null } });
    await waitUntil('the NetworkPolicy deleted', async () => (await policy()) === undefined, poll);
    // The Event is written once the deletion went through: it may come a moment after the wait.
    const deletedEvents = () => eventsAbout(client, namespace, 'guarded', 'NetworkPolicyDeleted');
    await waitUntil('NetworkPolicyDeleted announced', async () => (await deletedEvents()).length > 0, poll);
    await sleep(500); // a second one, were it written, would be written by now
    expect((await deletedEvents()).length).toBe(1);
  });

  it('runs the metrics sidecar in every pod and publishes its port, unless exporter.enabled is false', async () => {
    await createMemcached(client, 'metered', namespace, { size: 1, port: 11411 });
    const podSpec = async () => (await statefulSetOf('metered'))?.spec?.template.spec;
    await waitUntil('the StatefulSet', async () => (await podSpec()) !== undefined, poll);
    const exporter = (await podSpec())?.containers.find((c) => c.name === 'exporter');
    expect(exporter).toMatchObject({
      image: 'example.test/memcached-exporter:test',
      args: ['--memcached.address=127.0.0.1:11411', '--web.listen-address=:9150'],
      ports: [{ name: 'metrics', containerPort: 9150, protocol: 'TCP' }],
      livenessProbe: { httpGet: { path: '/healthz', port: 'metrics' } },
    });
    const ports = async () =>
      (await client.get(builtin.services, 'metered', namespace)).spec?.ports?.map(
        (p) => `${p.name}:${p.port}`,
      );
    expect(await ports()).toEqual(['memcached:11411', 'metrics:9150']);

    await client.patch(memcacheds, 'metered', namespace, {
      spec: { exporter: { enabled: false, image: 'example.test/other-exporter:1' } },
    });
    await waitUntil(
      'no sidecar',
      async () => (await podSpec())?.containers.map((c) => c.name).join() === 'memcached',
      poll,
    );
    await waitUntil('no metrics port', async () => (await ports())?.join() === 'memcached:11411', poll);
    await client.patch(memcacheds, 'metered', namespace, { spec: { exporter: { enabled: true } } });
    await waitUntil(
      'the named sidecar image',
      async () =>
        (await podSpec())?.containers.find((c) => c.name === 'exporter')?.image ===
        'example.test/other-exporter:1',
      poll,
    );
  });

  it('stops pods gracefully and spreads them as asked', async () => {
    await createMemcached(client, 'graceful', namespace, {
      size: 2,
      shutdown: { drainSeconds: 8 },
      spread: { policy: 'Required', topologyKey: 'topology.kubernetes.io/zone' },
    });
    const podSpec = async () => (await statefulSetOf('graceful'))?.spec?.template.spec;
    await waitUntil('the StatefulSet', async () => (await podSpec()) !== undefined, poll);
    const spec = await podSpec();
    expect(spec?.terminationGracePeriodSeconds).toBe(18);
    expect(spec?.containers[0]?.lifecycle).toEqual({ preStop: { sleep: { seconds: 8 } } });
    expect(spec?.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        nodeTaintsPolicy: 'Honor',
        matchLabelKeys: ['controller-revision-hash'],
        labelSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': 'graceful' },
        },
      },
    ]);
    // drainSeconds 0 and spread Disabled: memcached stops at once, no spreading rule.
    await client.patch(memcacheds, 'graceful', namespace, {
      spec: { shutdown: { drainSeconds: 0 }, spread: { policy: 'Disabled' } },
    });
    await waitUntil(
      'no preStop and no spread',
      async () => {
        const now = await podSpec();
        return now?.containers[0]?.lifecycle === undefined && now?.topologySpreadConstraints === undefined;
      },
      poll,
    );
    expect((await podSpec())?.terminationGracePeriodSeconds).toBe(10);
  });

  it('reports what the API server refused as a Degraded condition and a Warning Event, without crashing', async () => {
    // affinity is passed through as written; the StatefulSet's own validation refuses this one.
    await createMemcached(client, 'refused', namespace, {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
      },
    });
    await waitUntil(
      'Degraded ApplyFailed',
      async () => condition(await get('refused'), 'Degraded')?.reason === 'ApplyFailed',
      poll,
    );
    const degraded = condition(await get('refused'), 'Degraded');
    expect(degraded?.status).toBe('True');
    expect(degraded?.message).toMatch(/^applying StatefulSet refused: .*nodeSelectorTerms/);
    await waitUntil(
      'ApplyFailed event',
      async () => (await eventsAbout(client, namespace, 'refused', 'ApplyFailed')).length > 0,
      poll,
    );
    expect((await eventsAbout(client, namespace, 'refused', 'ApplyFailed'))[0]?.type).toBe('Warning');
    expect(
      lines.some(
        (l) =>
          l['name'] === 'refused' && l['msg'] === 'write refused; sending it again after its own backoff',
      ),
    ).toBe(true);

    // Fixing the spec clears the condition.
    await client.patch(memcacheds, 'refused', namespace, [{ op: 'remove', path: '/spec/affinity' }], {
      patchType: 'json',
    });
    await waitUntil(
      'Degraded cleared',
      async () => condition(await get('refused'), 'Degraded')?.status === 'False',
      poll,
    );
    expect(await statefulSetOf('refused')).toBeDefined();
  });

  it('never adopts an object of the same name that it does not own', async () => {
    await client.create(builtin.services, {
      metadata: { name: 'squatter', namespace },
      spec: { ports: [{ port: 80 }] },
    });
    await createMemcached(client, 'squatter', namespace);
    await waitUntil(
      'Degraded on the squatted Service',
      async () => condition(await get('squatter'), 'Degraded')?.status === 'True',
      poll,
    );
    expect(condition(await get('squatter'), 'Degraded')).toMatchObject({
      reason: 'NameTaken',
      message: expect.stringContaining(
        'Service squatter: an object of this name exists and is not controlled by this Memcached',
      ),
    });
    // Said once while it lasts, though the key is retried (with backoff) meanwhile.
    await consistently(
      'one NameTaken Warning, not repeated',
      async () => {
        const events = await eventsAbout(client, namespace, 'squatter', 'NameTaken');
        return events.length === 1 && events[0]?.type === 'Warning' && (events[0]?.series?.count ?? 1) === 1;
      },
      { forMs: 3000, intervalMs: 300 },
    );
    const service = await client.get(builtin.services, 'squatter', namespace);
    expect(service.metadata?.ownerReferences).toBeUndefined();

    // A ConfigMap is cached only when the operator labelled it: an unlabelled one is looked up.
    await client.create(builtin.configMaps, {
      metadata: { name: 'lodger-servers', namespace },
      data: { servers: 'mine' },
    });
    await createMemcached(client, 'lodger', namespace);
    await waitUntil(
      'Degraded on the ConfigMap',
      async () => condition(await get('lodger'), 'Degraded')?.reason === 'NameTaken',
      poll,
    );
    expect(condition(await get('lodger'), 'Degraded')?.message).toContain('ConfigMap lodger-servers');
    const configMap = await client.get(builtin.configMaps, 'lodger-servers', namespace);
    expect(configMap.metadata?.ownerReferences).toBeUndefined();
    expect(configMap.data).toEqual({ servers: 'mine' });
  });

  it('leaves nothing behind that garbage collection cannot explain when a Memcached is deleted', async () => {
    const created = await createMemcached(client, 'doomed', namespace, { size: 2 });
    await waitUntil(
      'doomed PDB',
      async () => (await client.find(builtin.podDisruptionBudgets, 'doomed', namespace)) !== undefined,
      poll,
    );
    await waitUntil(
      'doomed series',
      async () => (await cacheGauge(manager, 'memcached_cache_pods_desired', 'doomed')) === 2,
      poll,
    );
    await client.delete(memcacheds, 'doomed', namespace);
    await waitUntil(
      'doomed gone',
      async () => (await client.find(memcacheds, 'doomed', namespace)) === undefined,
      poll,
    );
    await waitUntil(
      'doomed series dropped',
      async () => (await cacheGauge(manager, 'memcached_cache_pods_desired', 'doomed')) === undefined,
      poll,
    );
    await sleep(1000); // give a wrong-headed operator time to recreate things
    // No garbage collector runs here; every object left must name the deleted Memcached as its
    // controller (so a cluster's garbage collector deletes it), and none may be new.
    const selector = 'app.kubernetes.io/instance=doomed';
    const left = [
      ...(await client.list(builtin.statefulSets, { namespace, labelSelector: selector })).items,
      ...(await client.list(builtin.configMaps, { namespace, labelSelector: selector })).items,
      ...(await client.list(builtin.services, { namespace, labelSelector: selector })).items,
      ...(await client.list(builtin.podDisruptionBudgets, { namespace, labelSelector: selector })).items,
    ];
    expect(left.map((o) => o.kind).sort()).toEqual([
      'ConfigMap',
      'PodDisruptionBudget',
      'Service',
      'StatefulSet',
    ]);
    for (const object of left) {
      expect(object.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ uid: created.metadata?.uid, controller: true, blockOwnerDeletion: true }),
      ]);
    }
  });
});

async function reconcileCount(manager: Manager): Promise<number> {
  const text = await manager.metrics.registry.getSingleMetricAsString('controller_runtime_reconcile_total');
  return [
    ...text.matchAll(/controller_runtime_reconcile_total\{[^}]*controller="memcached"[^}]*\} (\d+)/g),
  ].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** One Memcached's value of an operator gauge, as a scrape reads it; undefined without a series. */
async function cacheGauge(manager: Manager, metric: string, cache: string): Promise<number | undefined> {
  const text = await manager.metrics.registry.getSingleMetricAsString(metric);
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith(`${metric}{`) &&
        l.includes(`cache="${cache}"`) &&
        l.includes(`namespace="${namespace}"`),
    );
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

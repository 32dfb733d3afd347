// The `helm test` program against a real kube-apiserver + etcd: it reports the step that failed
// when no operator reconciles what it creates, and deletes that resource either way. (That it
// passes against each real operator is proved by `helm test` in each operator's e2e suite.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { Type } from '@sinclair/typebox';
import { buildCrd, builtin, KubeClient, resourceType } from '@homeostat/reconcile';
import { runHelmTest, type ReconciledObject } from './helm-test.ts';

const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'helm-test-test' });
const widgets = resourceType<ReconciledObject>('helmtest.test/v1', 'Widget', 'widgets');
// A kind with the status every Homeostat kind reports, through its status subresource.
const widgetCrd = buildCrd({
  group: 'helmtest.test',
  kind: 'Widget',
  plural: 'widgets',
  versions: [
    {
      name: 'v1',
      spec: Type.Object({ size: Type.Integer() }),
      status: Type.Object({
        observedGeneration: Type.Optional(Type.Integer()),
        phase: Type.Optional(Type.String()),
      }),
    },
  ],
});
const namespace = `helm-test-${process.pid}`;
let metrics: http.Server;
let metricsBody = '';

function metricsUrl(): string {
  return `http://127.0.0.1:${(metrics.address() as AddressInfo).port}/metrics`;
}

beforeAll(async () => {
  await installCrds(sharedKubeConfig(), [widgetCrd]);
  await client.create(builtin.namespaces, { metadata: { name: namespace } });
  metrics = http.createServer((_, response) => response.end(metricsBody));
  await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  metrics.close();
  await client.delete(builtin.namespaces, namespace);
  client.close();
});

const plan = (name: string) => ({
  metricsUrl: metricsUrl(),
  type: widgets,
  resource: { metadata: { name, namespace }, spec: { size: 1 } },
  timeouts: { metrics: 3000, reconcile: 3000, cleanup: 30_000 },
});

describe('runHelmTest (the helm test pod program), real kube-apiserver', () => {
  it('fails naming the metrics it waited for when the operator exports no controller', async () => {
    metricsBody = 'process_start_time_seconds 1\n';
    await expect(runHelmTest(client, plan('no-controller'), () => undefined)).rejects.toThrow(
      /the operator's metrics at http:\/\/127\.0\.0\.1:\d+\/metrics listing its controllers: not after 3 s \(no controller_runtime_active_workers series\)/,
    );
    expect(await client.find(widgets, 'no-controller', namespace)).toBeUndefined();
  });

  it('fails naming the resource no operator reconciled, and deletes it', async () => {
    metricsBody = 'controller_runtime_active_workers{controller="widget"} 0\n';
    const lines: string[] = [];
    await expect(runHelmTest(client, plan('unreconciled'), (line) => lines.push(line))).rejects.toThrow(
      `a status on Widget ${namespace}/unreconciled from the operator: not after 3 s (status.observedGeneration unset, generation 1)`,
    );
    expect(lines).toEqual([`the operator answers: ${metricsUrl()} lists its controllers`]);
    expect(await client.find(widgets, 'unreconciled', namespace)).toBeUndefined();
  });

  it('passes once something writes the status, and deletes the resource after', async () => {
    metricsBody = 'controller_runtime_active_workers{controller="widget"} 0\n';
    const lines: string[] = [];
    const test = runHelmTest(client, plan('reconciled'), (line) => lines.push(line));
    // Written as an operator writes it (the status subresource), by this test in its place.
    let written = false;
    while (!written) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const widget = await client.find(widgets, 'reconciled', namespace);
      if (!widget) continue;
      await client.patchStatus(widgets, 'reconciled', namespace, { observedGeneration: 1, phase: 'Ready' });
      written = true;
    }
    await test;
    expect(lines.at(1)).toBe(
      `the operator reconciles: Widget ${namespace}/reconciled observed (phase Ready)`,
    );
    expect(await client.find(widgets, 'reconciled', namespace)).toBeUndefined();
  });
});

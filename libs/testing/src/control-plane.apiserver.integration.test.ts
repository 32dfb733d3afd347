// Runs against a real kube-apiserver + etcd started by the global setup (test-global-setup.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, beforeAll } from 'vitest';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { binaryPath, kubernetesVersion } from './binaries.ts';
import { sharedKubeConfig, sharedKubeconfigPath } from './shared.ts';

const run = promisify(execFile);
const widgets = { group: 'testing.homeostat.dev', version: 'v1alpha1', plural: 'widgets' } as const;

interface Widget extends KubernetesObject {
  spec: { replicas: number; color?: string; storageClass?: string };
  status?: { replicas?: number; phase?: string };
}

function widget(namespace: string, name: string, spec: Widget['spec']): Widget {
  return {
    apiVersion: 'testing.homeostat.dev/v1alpha1',
    kind: 'Widget',
    metadata: { name, namespace },
    spec,
  };
}

/** The API server's own message from a rejected request. */
async function rejection(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    if (error instanceof ApiException) {
      const body = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as {
        message: string;
      };
      return { code: error.code, message: body.message };
    }
    throw error;
  }
  throw new Error('the API server accepted a request it should have rejected');
}

describe('libs/testing control plane, on a real kube-apiserver + etcd', () => {
  const kubeConfig = sharedKubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const objects = kubeConfig.makeApiClient(KubernetesObjectApi);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = `widgets-${process.pid}`;

  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });

  it('creates a namespace that the API server then serves', async () => {
    const ns = await core.readNamespace({ name: namespace });
    expect(ns.metadata?.name).toBe(namespace);
    expect(ns.status?.phase).toBe('Active');
  });

  it('kubectl accepts the kubeconfig file and reports the pinned server version', async () => {
    const { stdout } = await run(binaryPath('kubectl'), [
      '--kubeconfig',
      sharedKubeconfigPath(),
      'version',
      '-o',
      'json',
    ]);
    const versions = JSON.parse(stdout) as { serverVersion: { gitVersion: string } };
    expect(versions.serverVersion.gitVersion).toBe(kubernetesVersion);
  });

  it('creates, watches and server-side applies a custom resource', async () => {
    const events: { type: string; replicas: number; color?: string }[] = [];
    const watch = new Watch(kubeConfig);
    const seen = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`saw ${JSON.stringify(events)}`)), 15_000);
        const poll = setInterval(() => {
          if (events.length >= count) {
            clearTimeout(timer);
            clearInterval(poll);
            resolve();
          }
        }, 20);
      });
    const controller = await watch.watch(
      `/apis/${widgets.group}/${widgets.version}/namespaces/${namespace}/${widgets.plural}`,
      {},
      (type, object: Widget) =>
        events.push({
          type,
          replicas: object.spec.replicas,
          ...(object.spec.color ? { color: object.spec.color } : {}),
        }),
      () => undefined,
    );
    try {
      await objects.create(widget(namespace, 'applied', { replicas: 1 }));
      await seen(1);
      const applied = await objects.patch(
        widget(namespace, 'applied', { replicas: 2, color: 'green' }),
        undefined,
        undefined,
        'homeostat-test',
        true,
        PatchStrategy.ServerSideApply,
      );
      await seen(2);
      expect(events).toEqual([
        { type: 'ADDED', replicas: 1 },
        { type: 'MODIFIED', replicas: 2, color: 'green' },
      ]);
      expect(applied.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toContainEqual([
        'homeostat-test',
        'Apply',
      ]);
    } finally {
      controller.abort();
    }
  });

  it('writes status only through the status subresource', async () => {
    await objects.create(widget(namespace, 'with-status', { replicas: 3 }));
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const ref = { ...widgets, namespace, name: 'with-status' };

    // Through /status: status changes, spec does not.
    const afterStatus = (await custom.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: { replicas: 3, phase: 'Ready' }, spec: { replicas: 9 } } },
      mergePatch,
    )) as Widget;
    expect(afterStatus.status).toEqual({ replicas: 3, phase: 'Ready' });
    expect(afterStatus.spec.replicas).toBe(3);

    // Through the main resource: spec changes, status does not.
    const afterMain = (await custom.patchNamespacedCustomObject(
      { ...ref, body: { status: { phase: 'Hijacked' }, spec: { replicas: 4 } } },
      mergePatch,
    )) as Widget;
    expect(afterMain.status?.phase).toBe('Ready');
    expect(afterMain.spec.replicas).toBe(4);
    expect(afterMain.metadata?.generation).toBe(2);
  });

  it('rejects a custom resource that breaks the schema, with the API server message', async () => {
    const negative = await rejection(objects.create(widget(namespace, 'negative', { replicas: -1 })));
    expect(negative.code).toBe(422);
    expect(negative.message).toContain(
      'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    );

    const purple = await rejection(
      objects.create(widget(namespace, 'purple', { replicas: 1, color: 'purple' })),
    );
    expect(purple.code).toBe(422);
    expect(purple.message).toContain('spec.color: Unsupported value: "purple"');

    const missing = await rejection(
      objects.create({
        apiVersion: 'testing.homeostat.dev/v1alpha1',
        kind: 'Widget',
        metadata: { name: 'empty', namespace },
        spec: {},
      } as KubernetesObject),
    );
    expect(missing.message).toContain('spec.replicas: Required value');
  });

  it('enforces a CEL transition rule with its own message', async () => {
    await objects.create(widget(namespace, 'pinned', { replicas: 1, storageClass: 'fast' }));
    const changed = await rejection(
      custom.patchNamespacedCustomObject(
        { ...widgets, namespace, name: 'pinned', body: { spec: { storageClass: 'slow' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(changed.code).toBe(422);
    expect(changed.message).toContain('storageClass cannot be changed once set');
  });

  it('scales a custom resource through the scale subresource with kubectl', async () => {
    await objects.create(widget(namespace, 'scalable', { replicas: 1 }));
    await run(binaryPath('kubectl'), [
      '--kubeconfig',
      sharedKubeconfigPath(),
      '-n',
      namespace,
      'scale',
      'widget/scalable',
      '--replicas=5',
    ]);
    const scaled = (await custom.getNamespacedCustomObject({
      ...widgets,
      namespace,
      name: 'scalable',
    })) as Widget;
    expect(scaled.spec.replicas).toBe(5);
  });
});

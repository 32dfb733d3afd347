import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { rawApply } from './raw-apply.ts';
import {
  ApiextensionsV1Api,
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';

const fieldManager = 'homeostat-testing';

/**
 * Server-side applies every CustomResourceDefinition given (YAML file paths, or CRD objects) and
 * waits until each is Established and its resources can be watched, so a test can use them at once.
 */
export async function installCrds(
  kubeConfig: KubeConfig,
  sources: readonly (string | KubernetesObject)[],
  timeoutMs = 30_000,
): Promise<string[]> {
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const source of sources) {
    const file = typeof source === 'string' ? source : '(object)';
    const documents =
      typeof source === 'string'
        ? parseAllDocuments(await readFile(source, 'utf8')).map((d) => d.toJSON() as KubernetesObject | null)
        : [source];
    for (const doc of documents) {
      if (!doc) continue;
      if (doc.kind !== 'CustomResourceDefinition') {
        throw new Error(
          `${file} holds a ${String(doc.kind)}; installCrds takes only CustomResourceDefinitions`,
        );
      }
      try {
        await rawApply(
          kubeConfig,
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${doc.metadata?.name ?? ''}`,
          doc,
          fieldManager,
        );
      } catch (error) {
        throw new Error(`installing CRD ${doc.metadata?.name ?? '?'} from ${file} failed: ${String(error)}`, {
          cause: error,
        });
      }
      names.push(doc.metadata?.name ?? '');
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    let crd: V1CustomResourceDefinition;
    for (;;) {
      crd = await extensions.readCustomResourceDefinition({ name });
      const established = crd.status?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') break;
      if (Date.now() > deadline) {
        throw new Error(
          `CRD ${name} was not Established within ${timeoutMs} ms: ${JSON.stringify(crd.status)}`,
        );
      }
      await sleep(100);
    }
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      await waitUntilWatchable(
        kubeConfig,
        `/apis/${crd.spec.group}/${version.name}/${crd.spec.names.plural}`,
        deadline,
      );
    }
  }
  return names;
}

// For a moment after Established, the API server answers watches of the new resource with
// 429 while its watch cache initialises; wait that out here rather than in every test.
async function waitUntilWatchable(kubeConfig: KubeConfig, path: string, deadline: number): Promise<void> {
  const watch = new Watch(kubeConfig);
  for (;;) {
    try {
      const controller = await watch.watch(
        path,
        { allowWatchBookmarks: true },
        () => undefined,
        () => undefined,
      );
      controller.abort();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`${path} could not be watched: ${String(error)}`, { cause: error });
      await sleep(100);
    }
  }
}

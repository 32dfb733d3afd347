// JSON schemas for kubeconform, taken from the real kube-apiserver's OpenAPI (the pinned
// Kubernetes version) and from the chart's own CRDs. Nothing is downloaded.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type CustomResourceDefinition } from '@homeostat/reconcile';
import { crdKind } from '../chart/operator-chart.ts';

type Schema = { [key: string]: unknown };
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * OpenAPI v3 as Kubernetes serves it -> JSON Schema kubeconform checks strictly: objects with
 * properties refuse unknown keys; int-or-string and quantities accept both spellings; nullable allows null.
 */
export function toStrictJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toStrictJsonSchema);
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) out[key] = toStrictJsonSchema(value);
  if (out['format'] === 'int-or-string' || out['x-kubernetes-int-or-string'] === true) {
    delete out['type'];
    delete out['format'];
    out['anyOf'] = [{ type: 'string' }, { type: 'integer' }];
  }
  if (out['format'] === 'quantity') {
    delete out['type'];
    out['anyOf'] = [{ type: 'string' }, { type: 'number' }];
  }
  if (out['nullable'] === true && typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  if (
    isObject(out['properties']) &&
    !('additionalProperties' in out) &&
    !out['x-kubernetes-preserve-unknown-fields']
  ) {
    out['additionalProperties'] = false;
  }
  return out;
}

const fileName = (apiVersion: string, kind: string) => {
  const parts = apiVersion.split('/');
  return `${kind.toLowerCase()}_${parts[0]}_${parts[parts.length - 1]}.json`;
};

/** The -schema-location template that finds the files `writeKubeconformSchemas` writes into `dir`. */
export const schemaLocation = (dir: string) =>
  `${dir}/{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json`;

/** The API groups operator charts render objects of. */
const builtinGroupVersions = [
  'api/v1',
  'apis/apps/v1',
  'apis/policy/v1',
  'apis/rbac.authorization.k8s.io/v1',
  'apis/apiextensions.k8s.io/v1',
];

/** Writes a schema file per built-in kind (from the API server at `kubeConfig`) and per CRD version into `dir`. */
export async function writeKubeconformSchemas(
  kubeConfig: KubeConfig,
  crds: readonly CustomResourceDefinition[],
  dir: string,
): Promise<void> {
  const client = new KubeClient(kubeConfig, { fieldManager: 'chart-test' });
  try {
    for (const groupVersion of builtinGroupVersions) {
      const doc = await client.transport.json<{ components: { schemas: Record<string, Schema> } }>({
        method: 'GET',
        path: `/openapi/v3/${groupVersion}`,
      });
      const components = toStrictJsonSchema(doc.components);
      for (const [name, schema] of Object.entries(doc.components.schemas)) {
        const gvks = schema['x-kubernetes-group-version-kind'] as
          { group: string; version: string; kind: string }[] | undefined;
        for (const gvk of gvks ?? []) {
          const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
          if ((gvk.group ? `apis/${apiVersion}` : `api/${apiVersion}`) === groupVersion) {
            writeFileSync(
              join(dir, fileName(apiVersion, gvk.kind)),
              JSON.stringify({ $ref: `#/components/schemas/${name}`, components }),
            );
          }
        }
      }
    }
  } finally {
    client.close();
  }
  for (const crd of crds) {
    const group = crd.spec['group'] as string;
    for (const version of crd.spec['versions'] as { name: string; schema: { openAPIV3Schema: Schema } }[]) {
      writeFileSync(
        join(dir, fileName(`${group}/${version.name}`, crdKind(crd))),
        JSON.stringify(toStrictJsonSchema(version.schema.openAPIV3Schema)),
      );
    }
  }
}

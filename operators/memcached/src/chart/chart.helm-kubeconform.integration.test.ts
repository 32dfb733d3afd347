// Lints and renders the chart with the real helm, and validates every rendered object with
// kubeconform -strict against JSON schemas taken from the real kube-apiserver's OpenAPI (the pinned
// Kubernetes version) plus the Memcached CRD's own schema. No schema is downloaded.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { binaryPath, kubernetesVersion, pinnedKubernetesVersions } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '@homeostat/reconcile';
import { memcachedCrd } from '../api/memcached-crd.ts';
import { chartDir } from './chart-paths.ts';

type Schema = { [key: string]: unknown };
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

// OpenAPI v3 as Kubernetes serves it -> JSON Schema kubeconform checks strictly: objects with
// properties refuse unknown keys; int-or-string and quantities accept both spellings; nullable allows null.
function toStrictJsonSchema(node: unknown): unknown {
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

const builtinGroupVersions = [
  'api/v1',
  'apis/apps/v1',
  'apis/rbac.authorization.k8s.io/v1',
  'apis/apiextensions.k8s.io/v1',
];

describe('memcached-operator chart with helm and kubeconform', () => {
  const schemaDir = mkdtempSync(join(tmpdir(), 'memcached-chart-schemas-'));
  let helm: string;
  let kubeconform: string;

  beforeAll(async () => {
    helm = binaryPath('helm');
    kubeconform = binaryPath('kubeconform');
    const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'chart-test' });
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
                join(schemaDir, fileName(apiVersion, gvk.kind)),
                JSON.stringify({ $ref: `#/components/schemas/${name}`, components }),
              );
            }
          }
        }
      }
    } finally {
      client.close();
    }
    const version = (memcachedCrd.spec['versions'] as { schema: { openAPIV3Schema: Schema } }[])[0];
    writeFileSync(
      join(schemaDir, fileName('cache.homeostat.dev/v1alpha1', 'Memcached')),
      JSON.stringify(toStrictJsonSchema(version?.schema.openAPIV3Schema)),
    );
  });

  afterAll(() => rmSync(schemaDir, { recursive: true, force: true }));

  const template = (...args: string[]) =>
    spawnSync(
      helm,
      ['template', 'mc', chartDir, '--namespace', 'ops', '--kube-version', kubernetesVersion, ...args],
      {
        encoding: 'utf8',
      },
    );

  const validate = (manifests: string, extra: string[] = []) =>
    spawnSync(
      kubeconform,
      [
        '-strict',
        '-summary',
        '-schema-location',
        `${schemaDir}/{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json`,
        ...extra,
        '-',
      ],
      { input: manifests, encoding: 'utf8' },
    );

  it('passes helm lint --strict', () => {
    const out = execFileSync(helm, ['lint', '--strict', '--kube-version', kubernetesVersion, chartDir], {
      encoding: 'utf8',
    });
    expect(out).toContain('0 chart(s) failed');
  });

  it('declares the Kubernetes it supports: every pinned minor, not the one before the oldest', () => {
    for (const version of pinnedKubernetesVersions) {
      const rendered = spawnSync(helm, ['template', 'mc', chartDir, '--kube-version', version], {
        encoding: 'utf8',
      });
      expect(rendered.stderr, version).toBe('');
    }
    const [major, minor] = (pinnedKubernetesVersions[0] ?? '').slice(1).split('.').map(Number);
    const unsupported = `v${major}.${(minor ?? 0) - 1}.0`;
    const refused = spawnSync(helm, ['template', 'mc', chartDir, '--kube-version', unsupported], {
      encoding: 'utf8',
    });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(`chart requires kubeVersion: >=${major}.${minor}.0-0`);
  });

  it.each([
    ['defaults', []],
    ['namespaced, two replicas', ['--set', 'watchNamespaces={apps,cache}', '--set', 'replicaCount=2']],
    [
      'no CRD, no leader election, pinned digest',
      [
        '--set',
        'crds.enabled=false',
        '--set',
        'leaderElection.enabled=false',
        '--set',
        `image.digest=sha256:${'a'.repeat(64)}`,
      ],
    ],
  ])('renders objects that pass kubeconform -strict: %s', (_name, args) => {
    const rendered = template(...args);
    expect(rendered.stderr).toBe('');
    const result = validate(rendered.stdout);
    expect(result.stdout + result.stderr).toMatch(
      /Summary: \d+ resources found .* Valid: \d+, Invalid: 0, Errors: 0, Skipped: 0/,
    );
    expect(result.status).toBe(0);
  });

  it('catches a wrong field in a rendered object (the check can fail)', () => {
    const rendered = template().stdout.replace(
      'revisionHistoryLimit: 3',
      'revisionHistoryLimit: 3\n  replicaz: 2',
    );
    expect(validate(rendered).status).not.toBe(0);
  });

  it('renders an opt-in ServiceMonitor that selects the metrics Service', () => {
    const docs = parseAllDocuments(template('--set', 'prometheus.serviceMonitor.enabled=true').stdout).map(
      (d) => d.toJS() as Schema,
    );
    const monitor = docs.find((d) => d['kind'] === 'ServiceMonitor') as {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
    };
    const service = docs.find((d) => d['kind'] === 'Service') as {
      metadata: { labels: Record<string, string> };
      spec: { ports: { name: string }[] };
    };
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(service.spec.ports.map((p) => p.name)).toContain(monitor.spec.endpoints[0]?.port);
    expect(docs.some((d) => d['kind'] === 'ServiceMonitor')).toBe(true);
    expect(
      parseAllDocuments(template().stdout).some(
        (d) => (d.toJS() as Schema | null)?.['kind'] === 'ServiceMonitor',
      ),
    ).toBe(false);
  });

  it('grants least privilege: no wildcards, the Lease Role names its one Lease, the CRD is kept', () => {
    const docs = parseAllDocuments(template().stdout).map((d) => d.toJS() as Schema);
    const rules = docs
      .filter((d) => d['kind'] === 'ClusterRole' || d['kind'] === 'Role')
      .flatMap(
        (d) =>
          d['rules'] as {
            apiGroups: string[];
            resources: string[];
            verbs: string[];
            resourceNames?: string[];
          }[],
      );
    for (const rule of rules)
      expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
    const leaseRules = rules.filter((r) => r.resources.includes('leases'));
    expect(leaseRules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['mc-memcached-operator'],
        verbs: ['get', 'update', 'patch'],
      },
    ]);
    const crd = docs.find((d) => d['kind'] === 'CustomResourceDefinition') as {
      metadata: { annotations: Record<string, string> };
    };
    expect(crd.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    const deployment = docs.find((d) => d['kind'] === 'Deployment') as {
      spec: { template: { spec: { securityContext: Schema; containers: { securityContext: Schema }[] } } };
    };
    expect(deployment.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(deployment.spec.template.spec.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('refuses bad values through values.schema.json and the templates', () => {
    expect(template('--set', 'replicaCount=0').stderr).toContain('replicaCount');
    expect(template('--set', 'replicaCounts=2').stderr).toMatch(
      /additional properties 'replicaCounts' not allowed/,
    );
    expect(template('--set', 'replicaCount=2', '--set', 'leaderElection.enabled=false').stderr).toContain(
      'replicaCount > 1 needs leaderElection.enabled',
    );
  });
});

// The conventions every operator chart keeps, checked with the real helm and kubeconform: lint, a
// kubeVersion that admits every supported Kubernetes minor and no older one, rendered objects
// valid against the pinned Kubernetes' own OpenAPI and the chart's CRDs (an opt-in Grafana dashboard
// ConfigMap among them), an opt-in ServiceMonitor, RBAC without wildcards, kept CRDs, Pod Security
// "restricted", bad values refused, and a packaged chart that renders like the chart folder.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { binaryPath, kubernetesVersion, pinnedKubernetesVersions } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { chartPaths, crdKind, type OperatorChart } from '../chart/operator-chart.ts';
import { operatorJitNodeFlags } from '../bundle/bundle-operator.ts';
import { helm, helmTemplate, renderedObjects, type RenderedObject } from './helm-chart.ts';
import { schemaLocation, writeKubeconformSchemas } from './kubeconform-schemas.ts';

/** A named set of `helm template` arguments (e.g. --set pairs). */
export type ValueSet = readonly [name: string, args: readonly string[]];

export interface ChartConventionsOptions {
  /** Value sets of the operator's own values to render and validate, besides the common ones. */
  valueSets?: readonly ValueSet[];
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const release = 'chart';
const namespace = 'ops';

/**
 * Registers the chart-convention tests of `chart`. Needs the shared control plane
 * (controlPlaneGlobalSetup) for the OpenAPI schemas and the chart's dependencies built
 * (chartDependenciesGlobalSetup).
 */
export function describeChartConventions(chart: OperatorChart, options: ChartConventionsOptions = {}): void {
  const dir = chartPaths(chart).dir;
  const template = (...args: string[]) => helmTemplate(chart, release, namespace, args);
  const objects = (...args: string[]) => renderedObjects(template(...args).stdout);

  describe(`${chart.name} chart with helm and kubeconform`, () => {
    const schemaDir = mkdtempSync(join(tmpdir(), `${chart.name}-schemas-`));
    let kubeconform: string;

    beforeAll(async () => {
      kubeconform = binaryPath('kubeconform');
      await writeKubeconformSchemas(sharedKubeConfig(), chart.crds, schemaDir);
    });

    afterAll(() => rmSync(schemaDir, { recursive: true, force: true }));

    const validate = (manifests: string) =>
      spawnSync(kubeconform, ['-strict', '-summary', '-schema-location', schemaLocation(schemaDir), '-'], {
        input: manifests,
        encoding: 'utf8',
      });

    it('passes helm lint --strict', () => {
      const out = execFileSync(
        binaryPath('helm'),
        ['lint', '--strict', '--kube-version', kubernetesVersion, dir],
        {
          encoding: 'utf8',
        },
      );
      expect(out).toContain('0 chart(s) failed');
    });

    it('lists on Artifact Hub exactly the CRDs it installs, examples of those kinds only, and its links', () => {
      const chartYaml = parse(readFileSync(chartPaths(chart).chartYaml, 'utf8')) as {
        annotations?: Record<string, string>;
      };
      const annotation = (key: string) =>
        parse(chartYaml.annotations?.[`artifacthub.io/${key}`] ?? '[]') as unknown;
      const listed = annotation('crds') as { kind: string; version: string; name: string }[];
      const installed = chart.crds.map((crd) => {
        const versions = crd.spec['versions'] as { name: string; storage?: boolean }[];
        return {
          kind: crdKind(crd),
          version: versions.find((v) => v.storage)?.name ?? '',
          name: crd.metadata.name,
        };
      });
      expect(listed.map(({ kind, version, name }) => ({ kind, version, name }))).toEqual(installed);
      const exampleKinds = (annotation('crdsExamples') as { kind: string }[]).map((e) => e.kind);
      expect(exampleKinds.length).toBeGreaterThan(0);
      expect(installed.map((c) => c.kind)).toEqual(expect.arrayContaining(exampleKinds));
      const links = annotation('links') as { name?: string; url?: string }[];
      expect(links.length).toBeGreaterThan(0);
      for (const link of links) expect(link.url ?? '').toMatch(/^https:\/\//);
    });

    it('declares the Kubernetes it supports: every pinned minor, not the one before the oldest', () => {
      for (const version of pinnedKubernetesVersions) {
        expect(helm(['template', release, dir, '--kube-version', version]).stderr, version).toBe('');
      }
      const [major, minor] = (pinnedKubernetesVersions[0] ?? '').slice(1).split('.').map(Number);
      const refused = helm(['template', release, dir, '--kube-version', `v${major}.${(minor ?? 0) - 1}.0`]);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain(`chart requires kubeVersion: >=${major}.${minor}.0-0`);
    });

    const common: ValueSet[] = [
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
      [
        'Grafana dashboard ConfigMap in another namespace',
        [
          '--set',
          'grafana.dashboard.enabled=true',
          '--set',
          'grafana.dashboard.annotations.grafana_folder=Databases',
          '--set',
          'grafana.dashboard.namespace=monitoring',
        ],
      ],
    ];
    it.each([...common, ...(options.valueSets ?? [])])(
      'renders objects that pass kubeconform -strict: %s',
      (_name, args) => {
        const rendered = template(...args);
        expect(rendered.stderr).toBe('');
        const result = validate(rendered.stdout);
        expect(result.stdout + result.stderr).toMatch(
          /Summary: \d+ resources found .* Valid: \d+, Invalid: 0, Errors: 0, Skipped: 0/,
        );
        expect(result.status).toBe(0);
      },
    );

    it('catches a wrong field in a rendered object (the check can fail)', () => {
      const rendered = template().stdout.replace(
        'revisionHistoryLimit: 3',
        'revisionHistoryLimit: 3\n  replicaz: 2',
      );
      expect(validate(rendered).status).not.toBe(0);
    });

    it('renders an opt-in ServiceMonitor that selects the metrics Service', () => {
      const docs = objects('--set', 'prometheus.serviceMonitor.enabled=true');
      const monitor = docs.find((d) => d.kind === 'ServiceMonitor') as RenderedObject & {
        spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
      };
      const service = docs.find(
        (d) => d.kind === 'Service' && d.metadata?.name?.endsWith('-metrics'),
      ) as RenderedObject & {
        metadata: { labels: Record<string, string> };
        spec: { ports: { name: string }[] };
      };
      expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
      expect(service.spec.ports.map((p) => p.name)).toContain(monitor.spec.endpoints[0]?.port);
      expect(objects().some((d) => d.kind === 'ServiceMonitor')).toBe(false);
    });

    it('grants least privilege: no wildcards, the Lease Role names its one Lease, the CRDs are kept', () => {
      const docs = objects();
      const rules = docs
        .filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role')
        .flatMap((d) => d['rules'] as Rule[]);
      for (const rule of rules)
        expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
      expect(rules.filter((r) => r.resources.includes('leases'))).toEqual([
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          resourceNames: [`${release}-${chart.name}`],
          verbs: ['get', 'update', 'patch'],
        },
      ]);
      const crds = docs.filter((d) => d.kind === 'CustomResourceDefinition') as (RenderedObject & {
        metadata: { name: string; annotations: Record<string, string> };
      })[];
      expect(crds.map((c) => c.metadata.name).sort()).toEqual(chart.crds.map((c) => c.metadata.name).sort());
      for (const crd of crds) expect(crd.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    });

    it('runs the operator under Pod Security "restricted"', () => {
      const deployment = objects().find((d) => d.kind === 'Deployment') as RenderedObject & {
        spec: { template: { spec: { securityContext: object; containers: { securityContext: object }[] } } };
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

    it("keeps the image's entrypoint by default; jit=true runs the bundle with the same flags without --jitless", () => {
      type Container = { command?: string[] };
      const container = (...args: string[]) =>
        (
          objects(...args).find((d) => d.kind === 'Deployment') as RenderedObject & {
            spec: { template: { spec: { containers: Container[] } } };
          }
        ).spec.template.spec.containers[0];
      expect(container()?.command).toBeUndefined();
      expect(container('--set', 'jit=true')?.command).toEqual([
        'node',
        ...operatorJitNodeFlags,
        '/app/operator.mjs',
      ]);
    });

    it('renders a helm test whose objects the operator never selects, and refuses it without the metrics Service', () => {
      type Labelled = RenderedObject & {
        metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
        spec?: { selector?: { matchLabels?: Record<string, string> } };
      };
      const rendered = objects() as Labelled[];
      const tests = rendered.filter((o) => o.metadata?.annotations?.['helm.sh/hook'] === 'test');
      expect(tests.map((o) => o.kind).sort()).toEqual(['Pod', 'Role', 'RoleBinding', 'ServiceAccount']);
      // A bare pod with the Deployment's selector labels would be adopted by its ReplicaSet.
      const selector = rendered.find((o) => o.kind === 'Deployment')?.spec?.selector?.matchLabels ?? {};
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      for (const object of tests) {
        const labels = object.metadata?.labels ?? {};
        const selected = Object.entries(selector).every(([key, value]) => labels[key] === value);
        expect(selected, `${object.kind} ${object.metadata?.name ?? ''}`).toBe(false);
      }
      expect(
        objects('--set', 'helmTest.enabled=false').some((o) =>
          tests.some((t) => t.kind === o.kind && t.metadata?.name === o.metadata?.name),
        ),
      ).toBe(false);
      expect(template('--set', 'metrics.service.enabled=false').stderr).toContain(
        'helmTest.enabled needs metrics.service.enabled',
      );
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

    it('packages into a chart that renders the same objects as the chart folder', () => {
      const out = mkdtempSync(join(tmpdir(), `${chart.name}-package-`));
      try {
        const packaged = helm(['package', dir, '--destination', out]);
        expect(packaged.stderr).toBe('');
        const tgz = /saved it to: (\S+)/.exec(packaged.stdout)?.[1] ?? '';
        const fromPackage = helmTemplate(chart, release, namespace, [], tgz);
        expect(fromPackage.stderr).toBe('');
        expect(fromPackage.stdout).toBe(template().stdout);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

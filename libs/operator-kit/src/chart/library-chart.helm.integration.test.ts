// The library chart with the real helm: it lints on its own, and a chart built the way operator
// charts are (generated values, one include per template) renders every shared template, the
// Deployment's optional volumes included, and lints.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kubernetesVersion } from '@homeostat/testing';
import { helm, renderedObjects, type RenderedObject } from '../testing/helm-chart.ts';
import { widgetChart } from '../test-support/widget-chart.ts';
import { repoRoot } from './operator-chart.ts';
import { valuesSchema, valuesSchemaJson } from './values-schema.ts';
import { valuesYaml } from './values-yaml.ts';

const library = join(repoRoot, 'charts', 'homeostat-operator-lib');

const templates: Record<string, string> = {
  '_operator.tpl': [
    '{{- define "widget-operator.managerRules" -}}',
    '- apiGroups: [widgets.test]',
    '  resources: [widgets]',
    '  verbs: [get, list, watch]',
    '{{- end }}',
    '{{- define "widget-operator.env" -}}',
    '- name: WIDGET_IMAGE',
    '  value: {{ .Values.widgetImage | quote }}',
    '{{- end }}',
  ].join('\n'),
  'deployment.yaml':
    '{{- include "homeostat-operator.deployment" (dict "context" . "kind" "Widget" "env" (include "widget-operator.env" .)' +
    ' "volumeMounts" "- {name: scratch, mountPath: /tmp}" "volumes" "- {name: scratch, emptyDir: {}}") }}',
  'rbac.yaml':
    '{{- include "homeostat-operator.rbac" (dict "context" . "rules" (include "widget-operator.managerRules" .)) }}',
  'serviceaccount.yaml': '{{- include "homeostat-operator.serviceAccount" . }}',
  'metrics-service.yaml': '{{- include "homeostat-operator.metricsService" . }}',
  'servicemonitor.yaml': '{{- include "homeostat-operator.serviceMonitor" . }}',
  'NOTES.txt':
    '{{ include "homeostat-operator.notes.running" (dict "context" . "operator" "Widget") }}\n' +
    '{{- include "homeostat-operator.notes.crds" (dict "context" . "crds" "the Widget CRD" "resources" "Widgets") }}',
};

describe('charts/homeostat-operator-lib with helm', () => {
  const dir = mkdtempSync(join(tmpdir(), 'widget-chart-'));
  const chart = join(dir, 'widget-operator');

  beforeAll(() => {
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(
      join(chart, 'Chart.yaml'),
      stringify({
        apiVersion: 'v2',
        name: 'widget-operator',
        description: 'A chart built like the operator charts, for the library chart test.',
        version: '0.1.0',
        appVersion: '0.1.0',
        dependencies: [{ name: 'homeostat-operator-lib', version: '0.1.0', repository: `file://${library}` }],
      }),
    );
    writeFileSync(join(chart, 'values.yaml'), valuesYaml(valuesSchema(widgetChart), 'Widget values.'));
    writeFileSync(join(chart, 'values.schema.json'), valuesSchemaJson(widgetChart));
    for (const [name, text] of Object.entries(templates))
      writeFileSync(join(chart, 'templates', name), `${text}\n`);
    const built = helm(['dependency', 'build', chart]);
    expect(built.stderr).toBe('');
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes helm lint --strict as a library chart, and so does a chart that uses it', () => {
    for (const path of [library, chart]) {
      const linted = helm(['lint', '--strict', '--kube-version', kubernetesVersion, path]);
      expect(linted.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(linted.status).toBe(0);
    }
  });

  it("renders the shared objects around the operator's own rules, env and volumes", () => {
    const rendered = helm([
      'template',
      'w',
      chart,
      '--namespace',
      'ops',
      '--kube-version',
      kubernetesVersion,
    ]);
    expect(rendered.stderr).toBe('');
    const objects = renderedObjects(rendered.stdout);
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
    const deployment = objects.find((o) => o.kind === 'Deployment') as RenderedObject & {
      spec: {
        template: {
          spec: {
            volumes: object[];
            containers: { env: { name: string }[]; volumeMounts: object[]; image: string }[];
          };
        };
      };
    };
    const pod = deployment.spec.template.spec;
    expect(pod.containers[0]?.image).toBe('ghcr.io/homeostat/widget-operator:0.1.0');
    expect(pod.containers[0]?.env.map((e) => e.name)).toEqual([
      'POD_NAME',
      'POD_NAMESPACE',
      'WATCH_NAMESPACES',
      'WIDGET_IMAGE',
      'MAX_CONCURRENT_RECONCILES',
      'LOG_LEVEL',
    ]);
    expect(pod.containers[0]?.volumeMounts).toEqual([{ name: 'scratch', mountPath: '/tmp' }]);
    expect(pod.volumes).toEqual([{ name: 'scratch', emptyDir: {} }]);
    const clusterRole = objects.find((o) => o.kind === 'ClusterRole');
    expect(clusterRole?.['rules']).toEqual([
      { apiGroups: ['widgets.test'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
    ]);
  });

  it('refuses two replicas without leader election, naming what they would fight over', () => {
    const rendered = helm([
      'template',
      'w',
      chart,
      '--kube-version',
      kubernetesVersion,
      '--set',
      'replicaCount=2',
      '--set',
      'leaderElection.enabled=false',
    ]);
    expect(rendered.stderr).toContain('two active operators would fight over every Widget');
  });
});

// Renders a chart's CRD template from the CRD built out of the operator's TypeBox schema.
import { stringify } from 'yaml';
import type { CustomResourceDefinition } from '@homeostat/reconcile';
import type { OperatorChart } from './operator-chart.ts';

/**
 * The CRD as a Helm template: installed only with `crds.enabled`, kept on uninstall with
 * `crds.keep` (so deleting the release never deletes every custom resource), labelled like the
 * release through the library chart's homeostat-operator.labels.
 */
export function crdTemplate(chart: OperatorChart, crd: CustomResourceDefinition): string {
  // YAML 1.1 rules, as Helm's parser reads them: a 1.1 boolean word (off, on, yes, no, y, n) that
  // is a string in the schema (an enum value, a default) is quoted, or Helm would read a boolean.
  const spec = stringify({ spec: crd.spec }, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' });
  return [
    '{{- if .Values.crds.enabled }}',
    `# Generated from ${chart.workspace}/src/api by \`npm run generate -w ${chart.workspace}\`. Do not edit.`,
    `apiVersion: ${crd.apiVersion}`,
    `kind: ${crd.kind}`,
    'metadata:',
    `  name: ${crd.metadata.name}`,
    '  labels:',
    '    {{- include "homeostat-operator.labels" . | nindent 4 }}',
    '  {{- if .Values.crds.keep }}',
    '  annotations:',
    '    helm.sh/resource-policy: keep',
    '  {{- end }}',
    spec.trimEnd(),
    '{{- end }}',
    '',
  ].join('\n');
}

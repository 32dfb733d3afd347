// Renders the chart's CRD template from the CRD built out of the TypeBox schema.
import { stringify } from 'yaml';
import type { CustomResourceDefinition } from '@homeostat/reconcile';

export const generatedHeader =
  '# Generated from operators/memcached/src/api by `npm run generate -w operators/memcached`. Do not edit.';

/**
 * The CRD as a Helm template: installed only with `crds.enabled`, kept on uninstall with
 * `crds.keep` (so deleting the release never deletes every Memcached), labelled like the release.
 */
export function crdTemplate(crd: CustomResourceDefinition): string {
  const spec = stringify({ spec: crd.spec }, { lineWidth: 0, aliasDuplicateObjects: false });
  return [
    '{{- if .Values.crds.enabled }}',
    generatedHeader,
    `apiVersion: ${crd.apiVersion}`,
    `kind: ${crd.kind}`,
    'metadata:',
    `  name: ${crd.metadata.name}`,
    '  labels:',
    '    {{- include "memcached-operator.labels" . | nindent 4 }}',
    '  {{- if .Values.crds.keep }}',
    '  annotations:',
    '    helm.sh/resource-policy: keep',
    '  {{- end }}',
    spec.trimEnd(),
    '{{- end }}',
    '',
  ].join('\n');
}

// Renders the chart's CRD file from the CRD built out of the TypeBox schema.
// Until the shared chart helper lands (it wraps CRDs in the crds.enabled / crds.keep switches every
// chart of this repository has), the CRD is rendered as a plain manifest.
import { stringify } from 'yaml';
import type { CustomResourceDefinition } from '@homeostat/reconcile';

export const generatedHeader =
  '# Generated from operators/postgres/src/api by `npm run generate -w operators/postgres`. Do not edit.';

/** The CRD as the chart ships it. */
export function crdManifest(crd: CustomResourceDefinition): string {
  return `${generatedHeader}\n${stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}

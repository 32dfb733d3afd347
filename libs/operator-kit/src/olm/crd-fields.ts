// Reads a CRD's served version and the descriptions of its fields, so OLM descriptors quote the
// schema instead of restating it.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { CustomResourceDefinition } from '@homeostat/reconcile';

interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}
const schemaNode = Type.Recursive((self) =>
  Type.Object(
    {
      description: Type.Optional(Type.String()),
      properties: Type.Optional(Type.Record(Type.String(), self)),
      items: Type.Optional(self),
    },
    { additionalProperties: true },
  ),
);

const crdSpec = Type.Object(
  {
    group: Type.String(),
    names: Type.Object({ kind: Type.String(), plural: Type.String() }, { additionalProperties: true }),
    versions: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          storage: Type.Boolean(),
          schema: Type.Object({ openAPIV3Schema: schemaNode }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
export type CrdSpec = Static<typeof crdSpec>;

/** The parts of a CRD's spec OLM needs: group, names and versions with their schemas. */
export function crdSpecOf(crd: CustomResourceDefinition): CrdSpec {
  const spec: unknown = crd.spec;
  if (!Value.Check(crdSpec, spec)) {
    throw new Error(`CRD ${crd.metadata.name} has no group, names or versions with schemas`);
  }
  return spec;
}

/** The version objects are stored in, e.g. "v1alpha1". */
export function storageVersion(crd: CustomResourceDefinition): string {
  const version = crdSpecOf(crd).versions.find((v) => v.storage);
  if (!version) throw new Error(`CRD ${crd.metadata.name} has no storage version`);
  return version.name;
}

/**
 * The schema description of `section`.`path` (e.g. "spec", "storage.size") in the storage
 * version; throws when the field does not exist, so a renamed field fails the generator.
 */
export function fieldDescription(
  crd: CustomResourceDefinition,
  section: 'spec' | 'status',
  path: string,
): string {
  const version = crdSpecOf(crd).versions.find((v) => v.storage);
  let node: SchemaNode | undefined = version?.schema.openAPIV3Schema.properties?.[section];
  for (const step of path.split('.')) {
    node = node?.properties?.[step] ?? node?.items?.properties?.[step];
  }
  if (!node) throw new Error(`CRD ${crd.metadata.name} has no field ${section}.${path}`);
  return node.description ?? '';
}

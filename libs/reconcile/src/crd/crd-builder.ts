import type { TSchema } from '@sinclair/typebox';
import { structuralProblems, toCrdSchema, type JsonSchema } from './structural-schema.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** A CEL rule: `rule` is evaluated on the node; `message` is what the user sees when it is false. */
export interface ValidationRule {
  rule: string;
  message: string;
  /** A CEL string expression shown instead of `message` (which stays the fallback if it fails). */
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

export interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  /** The spec schema (TypeBox); put CEL rules on its nodes with `x-kubernetes-validations`. */
  spec: TSchema;
  /** The status schema (TypeBox). */
  status?: TSchema;
  /** CEL rules on the whole object (e.g. across spec and metadata). */
  validations?: ValidationRule[];
  printerColumns?: PrinterColumn[];
  /** Enables the status subresource (status written only through /status). Default true. */
  statusSubresource?: boolean;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

export interface CrdOptions {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope?: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /**
   * Bounds metadata.name (the only metadata field a CRD schema may describe). A rule on the name
   * (e.g. a DNS label pattern, because the name becomes a Service's) needs the bound to stay within
   * the API server's CEL cost budget.
   */
  nameMaxLength?: number;
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition as plain data. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: JsonSchema;
}

/**
 * Builds a CRD from TypeBox schemas plus names, printer columns, subresources and CEL rules.
 * Throws with every problem listed (with its path) if the schema is not structural, so a bad
 * schema fails at build time rather than at `kubectl apply`.
 */
export function buildCrd(options: CrdOptions): CustomResourceDefinition {
  if (options.versions.filter((v) => v.storage ?? options.versions.length === 1).length !== 1) {
    throw new Error(
      `CRD ${options.plural}.${options.group}: exactly one version must be the storage version`,
    );
  }
  const singular = options.singular ?? options.kind.toLowerCase();
  const versions = options.versions.map((version) => {
    const properties: JsonSchema = {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata:
        options.nameMaxLength === undefined
          ? { type: 'object' }
          : { type: 'object', properties: { name: { type: 'string', maxLength: options.nameMaxLength } } },
      spec: toCrdSchema(version.spec),
    };
    if (version.status) properties['status'] = toCrdSchema(version.status);
    const schema: JsonSchema = { type: 'object', properties };
    if (version.validations?.length) schema['x-kubernetes-validations'] = version.validations;
    const problems = structuralProblems(schema);
    if (problems.length) {
      throw new Error(
        `CRD ${options.plural}.${options.group} ${version.name}: schema is not structural:\n  ${problems.join('\n  ')}`,
      );
    }
    const subresources: JsonSchema = {};
    if (version.statusSubresource ?? Boolean(version.status)) subresources['status'] = {};
    if (version.scale) subresources['scale'] = version.scale;
    return {
      name: version.name,
      served: version.served ?? true,
      storage: version.storage ?? options.versions.length === 1,
      schema: { openAPIV3Schema: schema },
      ...(Object.keys(subresources).length ? { subresources } : {}),
      ...(version.printerColumns?.length ? { additionalPrinterColumns: version.printerColumns } : {}),
    };
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${options.plural}.${options.group}`,
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      group: options.group,
      scope: options.scope ?? 'Namespaced',
      names: {
        kind: options.kind,
        listKind: `${options.kind}List`,
        plural: options.plural,
        singular,
        ...(options.shortNames?.length ? { shortNames: options.shortNames } : {}),
        ...(options.categories?.length ? { categories: options.categories } : {}),
      },
      versions,
    },
  };
}

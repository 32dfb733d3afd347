// What an operator tells OLM about itself beyond what its chart already says: the listing a
// catalog shows (capability level, categories), the fields of its custom resources a console
// offers as form inputs and status cards, and the images it runs besides its own.

/** OLM's operator capability levels, lowest first; each level includes the ones before it. */
export const capabilityLevels = [
  'Basic Install',
  'Seamless Upgrades',
  'Full Lifecycle',
  'Deep Insights',
  'Auto Pilot',
] as const;
export type CapabilityLevel = (typeof capabilityLevels)[number];

/**
 * A field a console shows for a custom resource: `path` is the field's dotted path under spec or
 * status (e.g. "storage.size"); its description is read from the CRD schema, so the two never
 * drift. `xDescriptors` name the widget, e.g. "urn:alm:descriptor:com.tectonic.ui:podCount".
 */
export interface FieldDescriptor {
  path: string;
  displayName: string;
  xDescriptors: readonly string[];
}

/** How a console shows one of the operator's kinds. */
export interface OwnedKindListing {
  kind: string;
  displayName: string;
  /** One sentence: what one object of this kind is. */
  description: string;
  specDescriptors: readonly FieldDescriptor[];
  statusDescriptors: readonly FieldDescriptor[];
}

/** An operator's OLM listing (its bundle and catalog entry come from this and its chart). */
export interface OlmListing {
  /** The name a catalog lists it under, e.g. "Homeostat Memcached". */
  displayName: string;
  /** One line, shown on the catalog tile. */
  summary: string;
  /** Markdown, shown on the operator's page in a console: what it does and where to read on. */
  description: string;
  /** The level its features justify (docs/adr/0013 says why each operator has its level). */
  capability: CapabilityLevel;
  /** OperatorHub's standard categories, e.g. ["Database"]. */
  categories: readonly string[];
  keywords: readonly string[];
  /** One entry per kind the chart's CRDs define. */
  ownedKinds: readonly OwnedKindListing[];
  /** The operand images the operator runs by default, by a name a mirror tool can show. */
  operandImages: readonly { name: string; image: string }[];
  /** The sample custom resources (YAML files, from the operator's workspace): alm-examples. */
  samples: readonly string[];
}

/** x-descriptors a console knows, named for what they show. */
export const widget = {
  podCount: 'urn:alm:descriptor:com.tectonic.ui:podCount',
  number: 'urn:alm:descriptor:com.tectonic.ui:number',
  text: 'urn:alm:descriptor:com.tectonic.ui:text',
  booleanSwitch: 'urn:alm:descriptor:com.tectonic.ui:booleanSwitch',
  resourceRequirements: 'urn:alm:descriptor:com.tectonic.ui:resourceRequirements',
  nodeSelector: 'urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Node',
  advanced: 'urn:alm:descriptor:com.tectonic.ui:advanced',
  conditions: 'urn:alm:descriptor:io.kubernetes.conditions',
  phase: 'urn:alm:descriptor:io.kubernetes.phase',
  podStatuses: 'urn:alm:descriptor:com.tectonic.ui:podStatuses',
  secret: 'urn:alm:descriptor:io.kubernetes:Secret',
  pod: 'urn:alm:descriptor:io.kubernetes:Pod',
  endpoint: 'urn:alm:descriptor:org.w3:link',
} as const;

/** A field a console shows with the given widgets (text when none is named). */
export function field(path: string, displayName: string, ...xDescriptors: string[]): FieldDescriptor {
  return { path, displayName, xDescriptors: xDescriptors.length > 0 ? xDescriptors : [widget.text] };
}

/** The KEP-1623 conditions every Homeostat kind reports in status.conditions. */
export const conditionsField = field('conditions', 'Conditions', widget.conditions);

/** The one-word state in status.phase of the kinds that have one. */
export const phaseField = field('phase', 'Phase', widget.phase);

/** The CPU and memory of the operand's containers, in spec.resources of every Homeostat kind. */
export const resourcesField = field('resources', 'Resources', widget.resourceRequirements);

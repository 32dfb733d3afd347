// @homeostat/operator-kit/olm: an operator's OLM bundle and file-based catalog package, from its chart.
export {
  capabilityLevels,
  conditionsField,
  field,
  phaseField,
  resourcesField,
  widget,
  type CapabilityLevel,
  type FieldDescriptor,
  type OlmListing,
  type OwnedKindListing,
} from './olm-listing.ts';
export { bundleImage, olmChannel, olmFiles, olmPaths } from './bundle-files.ts';
export {
  catalogEntries,
  catalogProblems,
  type CatalogEntry,
  type CatalogPackage,
} from './file-based-catalog.ts';
export { almExamples, clusterServiceVersion, csvName } from './cluster-service-version.ts';

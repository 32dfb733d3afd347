// The facts about an operator's release its Chart.yaml already states (version, home, sources,
// Kubernetes versions), read once so the bundle never restates them.
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse } from 'yaml';
import { chartPaths, type OperatorChart } from '../chart/operator-chart.ts';
import type { CapabilityLevel, OlmListing } from './olm-listing.ts';

const chartYaml = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    appVersion: Type.String(),
    kubeVersion: Type.String(),
    home: Type.String(),
    sources: Type.Array(Type.String()),
    license: Type.String(),
    annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: true },
);
export type ChartMetadata = Static<typeof chartYaml> & {
  /** The oldest Kubernetes the chart admits, e.g. "1.35.0" (from kubeVersion ">=1.35.0-0"). */
  minKubeVersion: string;
};

/** The chart's Chart.yaml, with the oldest Kubernetes version it admits. */
export function chartMetadata(chart: OperatorChart): ChartMetadata {
  const parsed: unknown = parse(readFileSync(chartPaths(chart).chartYaml, 'utf8'));
  if (!Value.Check(chartYaml, parsed))
    throw new Error(`${chart.name}/Chart.yaml lacks a field the OLM bundle reads`);
  const oldest = /^>=\s*(\d+\.\d+\.\d+)(?:-0)?$/.exec(parsed.kubeVersion)?.[1];
  if (!oldest)
    throw new Error(`${chart.name}/Chart.yaml kubeVersion ${parsed.kubeVersion} is not ">=X.Y.Z-0"`);
  return { ...parsed, minKubeVersion: oldest };
}

/**
 * The capability level the OLM listing claims, after checking that the chart's Artifact Hub
 * annotation (artifacthub.io/operatorCapabilities) claims the same: one operator, one level.
 */
export function agreedCapability(metadata: ChartMetadata, listing: OlmListing): CapabilityLevel {
  const chartLevel = metadata.annotations?.['artifacthub.io/operatorCapabilities'];
  if (chartLevel !== undefined && chartLevel !== listing.capability) {
    throw new Error(
      `${metadata.name}/Chart.yaml says artifacthub.io/operatorCapabilities: ${chartLevel}, its OLM listing ${listing.capability}`,
    );
  }
  return listing.capability;
}

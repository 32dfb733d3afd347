import { describe, expect, it } from 'vitest';
import { agreedCapability, type ChartMetadata } from './chart-metadata.ts';
import type { OlmListing } from './olm-listing.ts';

const metadata = (annotations?: Record<string, string>): ChartMetadata => ({
  name: 'widget-operator',
  description: 'Runs widgets.',
  appVersion: '1.0.0',
  kubeVersion: '>=1.35.0-0',
  minKubeVersion: '1.35.0',
  home: 'https://example.test',
  sources: [],
  license: 'Apache-2.0',
  ...(annotations ? { annotations } : {}),
});
const listing: OlmListing = {
  displayName: 'Widgets',
  summary: 'Runs widgets.',
  description: 'Runs widgets.',
  capability: 'Full Lifecycle',
  categories: ['Database'],
  keywords: [],
  ownedKinds: [],
  operandImages: [],
  samples: [],
};

describe('agreedCapability', () => {
  it("is the listing's level when the chart claims the same or none", () => {
    expect(
      agreedCapability(metadata({ 'artifacthub.io/operatorCapabilities': 'Full Lifecycle' }), listing),
    ).toBe('Full Lifecycle');
    expect(agreedCapability(metadata(), listing)).toBe('Full Lifecycle');
  });

  it('refuses a chart whose Artifact Hub annotation claims another level', () => {
    expect(() =>
      agreedCapability(metadata({ 'artifacthub.io/operatorCapabilities': 'Basic Install' }), listing),
    ).toThrow('artifacthub.io/operatorCapabilities: Basic Install, its OLM listing Full Lifecycle');
  });
});

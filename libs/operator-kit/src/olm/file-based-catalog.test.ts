import { describe, expect, it } from 'vitest';
import { catalogEntries, catalogProblems, type CatalogPackage } from './file-based-catalog.ts';

const widgets: CatalogPackage = {
  name: 'widget-operator',
  description: 'Runs widgets.',
  channel: 'candidate',
  bundle: {
    name: 'widget-operator.v1.0.0',
    version: '1.0.0',
    image: 'example.test/widget-operator-bundle:1.0.0',
    apis: [{ group: 'widgets.test', kind: 'Widget', version: 'v1' }],
    relatedImages: [{ name: 'operator', image: 'example.test/widget-operator:1.0.0' }],
  },
};

// A sound package with one entry changed by `change`.
function changed(
  schema: string,
  change: (entry: Record<string, unknown>) => Record<string, unknown>,
): unknown[] {
  return catalogEntries(widgets).map((entry) => (entry.schema === schema ? change({ ...entry }) : entry));
}

describe('catalogProblems', () => {
  it('finds none in the entries catalogEntries makes', () => {
    expect(catalogProblems(catalogEntries(widgets))).toEqual([]);
  });

  it('names an unknown schema and an entry missing a required field', () => {
    expect(catalogProblems([...catalogEntries(widgets), { schema: 'olm.deprecations' }])).toEqual([
      'entry 3: schema olm.deprecations is none of olm.package, olm.channel, olm.bundle',
    ]);
    const noImage = changed('olm.bundle', (b) =>
      Object.fromEntries(Object.entries(b).filter(([key]) => key !== 'image')),
    );
    expect(catalogProblems(noImage).join('\n')).toMatch(/entry 2 \(olm\.bundle\): .*image/);
  });

  it('refuses a default channel that is not declared', () => {
    const entries = changed('olm.package', (p) => ({ ...p, defaultChannel: 'stable' }));
    expect(catalogProblems(entries)).toEqual([
      'default channel stable of package widget-operator is not declared',
    ]);
  });

  it('refuses a channel that names a bundle the package lacks, and the bundle left in no channel', () => {
    const entries = changed('olm.channel', (c) => ({ ...c, entries: [{ name: 'widget-operator.v2.0.0' }] }));
    expect(catalogProblems(entries)).toEqual([
      'channel candidate names bundle widget-operator.v2.0.0, which is not declared',
      'bundle widget-operator.v1.0.0 is in no channel',
    ]);
  });

  it('refuses a bundle whose olm.package property names another package', () => {
    const entries = changed('olm.bundle', (b) => ({
      ...b,
      properties: [{ type: 'olm.package', value: { packageName: 'gadget-operator', version: '1.0.0' } }],
    }));
    expect(catalogProblems(entries)).toEqual([
      'bundle widget-operator.v1.0.0 needs one olm.package property naming widget-operator',
    ]);
  });

  it('refuses two packages in one package folder', () => {
    expect(catalogProblems([...catalogEntries(widgets), catalogEntries(widgets)[0]])).toEqual([
      'expected one olm.package, found 2',
    ]);
  });
});

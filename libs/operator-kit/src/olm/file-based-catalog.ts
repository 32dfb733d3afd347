// An operator's package in the file-based catalog (olm/catalog/<package>/catalog.yaml): an
// olm.package, an olm.channel and an olm.bundle per version, and the checks a catalog server
// makes on their shape and references, so a broken catalog fails `npm test` rather than a cluster.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { homeostatIcon } from './homeostat-icon.ts';

const icon = Type.Object({
  base64data: Type.String({ minLength: 1 }),
  mediatype: Type.String({ minLength: 1 }),
});
const property = Type.Object({ type: Type.String({ minLength: 1 }), value: Type.Unknown() });
const image = Type.Object({ name: Type.String(), image: Type.String({ minLength: 1 }) });

const packageEntry = Type.Object(
  {
    schema: Type.Literal('olm.package'),
    name: Type.String({ minLength: 1 }),
    defaultChannel: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    icon: Type.Optional(icon),
  },
  { additionalProperties: false },
);
const channelEntry = Type.Object(
  {
    schema: Type.Literal('olm.channel'),
    package: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    entries: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          replaces: Type.Optional(Type.String()),
          skips: Type.Optional(Type.Array(Type.String())),
          skipRange: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);
const bundleEntry = Type.Object(
  {
    schema: Type.Literal('olm.bundle'),
    package: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    image: Type.String({ minLength: 1 }),
    properties: Type.Array(property),
    relatedImages: Type.Optional(Type.Array(image)),
  },
  { additionalProperties: false },
);
const packageProperty = Type.Object({
  type: Type.Literal('olm.package'),
  value: Type.Object({ packageName: Type.String(), version: Type.String() }),
});
const gvkProperty = Type.Object({
  type: Type.Literal('olm.gvk'),
  value: Type.Object({ group: Type.String(), kind: Type.String(), version: Type.String() }),
});

export type CatalogEntry =
  Static<typeof packageEntry> | Static<typeof channelEntry> | Static<typeof bundleEntry>;

/** What a package's entries are made from. */
export interface CatalogPackage {
  name: string;
  /** Shown on the package in a catalog. */
  description: string;
  channel: string;
  bundle: {
    name: string;
    version: string;
    /** The bundle image a cluster pulls: the bundle directory of this version, built FROM scratch. */
    image: string;
    apis: readonly { group: string; kind: string; version: string }[];
    relatedImages: readonly { name: string; image: string }[];
  };
}

/** The package's entries, in the order a catalog lists them: package, channel, bundle. */
export function catalogEntries(pkg: CatalogPackage): CatalogEntry[] {
  return [
    {
      schema: 'olm.package',
      name: pkg.name,
      defaultChannel: pkg.channel,
      description: pkg.description,
      icon: { ...homeostatIcon },
    },
    { schema: 'olm.channel', package: pkg.name, name: pkg.channel, entries: [{ name: pkg.bundle.name }] },
    {
      schema: 'olm.bundle',
      package: pkg.name,
      name: pkg.bundle.name,
      image: pkg.bundle.image,
      properties: [
        { type: 'olm.package', value: { packageName: pkg.name, version: pkg.bundle.version } },
        ...pkg.bundle.apis.map((api) => ({ type: 'olm.gvk', value: { ...api } })),
      ],
      relatedImages: pkg.bundle.relatedImages.map((i) => ({ ...i })),
    },
  ];
}

function entryProblems(entry: unknown, index: number): string[] {
  const schemaName =
    typeof entry === 'object' && entry !== null && 'schema' in entry ? entry.schema : undefined;
  const schema =
    schemaName === 'olm.package'
      ? packageEntry
      : schemaName === 'olm.channel'
        ? channelEntry
        : schemaName === 'olm.bundle'
          ? bundleEntry
          : undefined;
  if (!schema)
    return [`entry ${index}: schema ${String(schemaName)} is none of olm.package, olm.channel, olm.bundle`];
  return [...Value.Errors(schema, entry)].map(
    (e) => `entry ${index} (${String(schemaName)}): ${e.path || '/'} ${e.message}`,
  );
}

/**
 * Every problem of a package's catalog entries, empty when the package is sound: each entry
 * matches its schema; one olm.package whose default channel exists; every channel entry names a
 * bundle of the package; every bundle is in a channel and carries one olm.package property that
 * names this package, and well-formed olm.gvk properties; no name twice.
 */
export function catalogProblems(entries: readonly unknown[]): string[] {
  const shapeProblems = entries.flatMap(entryProblems);
  if (shapeProblems.length > 0) return shapeProblems;
  const packages = entries.filter((e) => Value.Check(packageEntry, e));
  const channels = entries.filter((e) => Value.Check(channelEntry, e));
  const bundles = entries.filter((e) => Value.Check(bundleEntry, e));
  const problems: string[] = [];
  const [pkg, ...extra] = packages;
  if (!pkg || extra.length > 0) return [`expected one olm.package, found ${packages.length}`];
  const twice = (names: string[]) => names.filter((n, i) => names.indexOf(n) !== i);
  for (const name of twice(channels.map((c) => c.name))) problems.push(`channel ${name} is declared twice`);
  for (const name of twice(bundles.map((b) => b.name))) problems.push(`bundle ${name} is declared twice`);
  if (!channels.some((c) => c.name === pkg.defaultChannel)) {
    problems.push(`default channel ${pkg.defaultChannel} of package ${pkg.name} is not declared`);
  }
  for (const entry of [...channels, ...bundles]) {
    if (entry.package !== pkg.name)
      problems.push(`${entry.schema} ${entry.name} belongs to ${entry.package}, not ${pkg.name}`);
  }
  const inChannels = new Set(channels.flatMap((c) => c.entries.map((e) => e.name)));
  for (const channel of channels) {
    for (const entry of channel.entries) {
      if (!bundles.some((b) => b.name === entry.name))
        problems.push(`channel ${channel.name} names bundle ${entry.name}, which is not declared`);
    }
  }
  for (const bundle of bundles) {
    if (!inChannels.has(bundle.name)) problems.push(`bundle ${bundle.name} is in no channel`);
    const packageProperties = bundle.properties.filter((p) => p.type === 'olm.package');
    const [own, ...more] = packageProperties;
    if (!own || more.length > 0 || !Value.Check(packageProperty, own) || own.value.packageName !== pkg.name) {
      problems.push(`bundle ${bundle.name} needs one olm.package property naming ${pkg.name}`);
    }
    for (const gvk of bundle.properties.filter((p) => p.type === 'olm.gvk')) {
      if (!Value.Check(gvkProperty, gvk))
        problems.push(`bundle ${bundle.name} has an olm.gvk property without group, kind and version`);
    }
  }
  return problems;
}

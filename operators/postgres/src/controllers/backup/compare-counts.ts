// A drill's counts against the source's (ADR 0221): both taken at the same WAL position L, so
// every database must hold the same tables and rows, table by table (the per-table digest). The
// source's side travels on the drill's pod (an annotation, written when it starts), so an operator
// restarted mid-drill still compares; the pod's side is its termination message.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { SourceCounts } from './source-counts.ts';

/** On a drill's pod: the source's counts at L (SourceCounts, JSON), or why there are none. */
export const sourceCountsAnnotation = 'postgres.homeostat.dev/source-counts';

const Counts = Type.Object({
  name: Type.String(),
  tables: Type.Integer({ minimum: 0 }),
  rows: Type.Integer({ minimum: 0 }),
  digest: Type.Optional(Type.String()),
});
type Counts = Static<typeof Counts>;

const SourceCountsSchema = Type.Union([
  Type.Object({
    compared: Type.Literal(true),
    lsn: Type.String(),
    standby: Type.String(),
    databases: Type.Array(Type.Intersect([Counts, Type.Object({ digest: Type.String() })])),
  }),
  Type.Object({ compared: Type.Literal(false), reason: Type.String() }),
]);

/** The annotation's value read back; undefined when absent or unreadable. */
export function parseSourceCounts(text: string | undefined): SourceCounts | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Value.Check(SourceCountsSchema, parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** What the drill pod counted: at `countedAt` (L) when it was asked to, else at the archive's end. */
export interface CopyCounts {
  readonly countedAt?: string | undefined;
  readonly databases: readonly Counts[];
}

export type Comparison =
  | { readonly result: 'Equal'; readonly lsn: string; readonly standby: string }
  | { readonly result: 'Differ'; readonly message: string }
  | { readonly result: 'NotCompared'; readonly reason: string };

const describe = (c: Counts | undefined) => (c ? `${c.tables} tables, ${c.rows} rows` : 'absent');

/** Differences named, at most this many in a message (the message stays bounded). */
const namedAtMost = 3;

export function compareCounts(source: SourceCounts | undefined, copy: CopyCounts): Comparison {
  if (!source)
    return {
      result: 'NotCompared',
      reason: 'the drill pod carries no source counts (started before they were taken)',
    };
  if (!source.compared) return { result: 'NotCompared', reason: source.reason };
  if (copy.countedAt === undefined)
    return {
      result: 'NotCompared',
      reason: `the drill image did not count at ${source.lsn} (an image older than the operator?)`,
    };
  if (copy.countedAt !== source.lsn)
    return {
      result: 'Differ',
      message: `the copy was counted at ${copy.countedAt}, the source at ${source.lsn}`,
    };
  const copied = new Map(copy.databases.map((d) => [d.name, d]));
  const names = [...new Set([...source.databases.map((d) => d.name), ...copied.keys()])].sort();
  const differences: string[] = [];
  for (const name of names) {
    const s = source.databases.find((d) => d.name === name);
    const c = copied.get(name);
    if (s && c && s.tables === c.tables && s.rows === c.rows && s.digest === c.digest) continue;
    const totalsEqual = s && c && s.tables === c.tables && s.rows === c.rows;
    differences.push(
      totalsEqual
        ? `database ${name}: ${describe(s)} on both, but in different tables (their per-table counts differ)`
        : `database ${name}: source ${describe(s)}, restored copy ${describe(c)}`,
    );
  }
  if (differences.length === 0) return { result: 'Equal', lsn: source.lsn, standby: source.standby };
  const more =
    differences.length > namedAtMost ? `; ${differences.length - namedAtMost} more databases differ` : '';
  return {
    result: 'Differ',
    message: `counts at ${source.lsn} (source counted on ${source.standby}) differ: ${differences.slice(0, namedAtMost).join('; ')}${more}`,
  };
}

import { describe, expect, it } from 'vitest';
import { compareCounts, parseSourceCounts } from './compare-counts.ts';
import type { SourceCounts } from './source-counts.ts';

const lsn = '0/5000060';
const app = { name: 'app', tables: 3, rows: 1200, digest: 'a'.repeat(32) };
const postgres = { name: 'postgres', tables: 1, rows: 501, digest: 'b'.repeat(32) };
const source: SourceCounts = { compared: true, lsn, standby: 'vault-1', databases: [app, postgres] };

describe('compareCounts: the drill copy against the source at one WAL position', () => {
  it('is Equal when every database has the same tables, rows and per-table digest at the same position', () => {
    expect(compareCounts(source, { countedAt: lsn, databases: [postgres, app] })).toEqual({
      result: 'Equal',
      lsn,
      standby: 'vault-1',
    });
  });

  it('names the database and both counts when rows differ', () => {
    const got = compareCounts(source, { countedAt: lsn, databases: [{ ...app, rows: 1100 }, postgres] });
    expect(got).toEqual({
      result: 'Differ',
      message:
        'counts at 0/5000060 (source counted on vault-1) differ: database app: source 3 tables, 1200 rows, restored copy 3 tables, 1100 rows',
    });
  });

  it('tells equal totals in different tables apart by the digest', () => {
    const got = compareCounts(source, {
      countedAt: lsn,
      databases: [{ ...app, digest: 'c'.repeat(32) }, postgres],
    });
    expect(got.result).toBe('Differ');
    expect(got.result === 'Differ' && got.message).toContain(
      'database app: 3 tables, 1200 rows on both, but in different tables',
    );
  });

  it('names a database missing on either side', () => {
    const got = compareCounts(source, {
      countedAt: lsn,
      databases: [postgres, { name: 'other', tables: 1, rows: 1, digest: 'd'.repeat(32) }],
    });
    expect(got.result === 'Differ' && got.message).toContain(
      'database app: source 3 tables, 1200 rows, restored copy absent; database other: source absent, restored copy 1 tables, 1 rows',
    );
  });

  it('bounds the message: three databases named, the rest counted', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({
      name: `db${String(i).padStart(2, '0')}`,
      tables: 1,
      rows: i,
      digest: 'e'.repeat(32),
    }));
    const got = compareCounts(
      { compared: true, lsn, standby: 'vault-1', databases: many },
      { countedAt: lsn, databases: many.map((d) => ({ ...d, rows: d.rows + 1 })) },
    );
    expect(got.result === 'Differ' && got.message).toMatch(/database db02: .*; 17 more databases differ$/);
    expect(got.result === 'Differ' && got.message.length).toBeLessThan(400);
  });

  it('differs when the copy was counted at another position', () => {
    expect(compareCounts(source, { countedAt: '0/6000000', databases: [app, postgres] })).toEqual({
      result: 'Differ',
      message: 'the copy was counted at 0/6000000, the source at 0/5000060',
    });
  });

  it('is NotCompared, with the reason, when the source was not counted or the copy not at a position', () => {
    expect(compareCounts({ compared: false, reason: 'no streaming standby' }, { databases: [app] })).toEqual({
      result: 'NotCompared',
      reason: 'no streaming standby',
    });
    expect(compareCounts(source, { databases: [app, postgres] })).toMatchObject({
      result: 'NotCompared',
      reason: expect.stringContaining('did not count at 0/5000060'),
    });
    expect(compareCounts(undefined, { countedAt: lsn, databases: [app] }).result).toBe('NotCompared');
  });
});

describe('parseSourceCounts: the annotation read back', () => {
  it('reads what the operator wrote, and nothing else', () => {
    expect(parseSourceCounts(JSON.stringify(source))).toEqual(source);
    expect(parseSourceCounts(JSON.stringify({ compared: false, reason: 'why' }))).toEqual({
      compared: false,
      reason: 'why',
    });
    expect(parseSourceCounts(undefined)).toBeUndefined();
    expect(parseSourceCounts('{')).toBeUndefined();
    expect(parseSourceCounts(JSON.stringify({ compared: true, lsn }))).toBeUndefined();
    expect(
      parseSourceCounts(
        JSON.stringify({ ...source, databases: [{ name: 'app', tables: -1, rows: 0, digest: '' }] }),
      ),
    ).toBeUndefined();
  });
});

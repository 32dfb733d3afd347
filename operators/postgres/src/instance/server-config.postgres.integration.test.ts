// The configuration the entrypoint writes, as a real PostgreSQL 15 server reads it: the user's
// parameters cannot override a setting the operator owns (the operator's come last), they can
// change the operator's defaults, and every setting the entrypoint owns is one the API refuses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { operatorOwnedParameters } from '../api/operator-owned-parameters.ts';

describe('the server configuration the entrypoint writes, read by a real PostgreSQL 15', () => {
  const bed = new PostgresTestBed('config');
  let instance: TestInstance;
  // What the API server refuses, given anyway (as an older operator's pod or a hand-made one would).
  const overrides = [
    'wal_receiver_timeout = 60s',
    'wal_sender_timeout = 0',
    "hot_standby_feedback = 'off'",
    "full_page_writes = 'off'",
    "recovery_min_apply_delay = '1h'",
    "wal_keep_size = '1GB'",
  ].join('\n');

  beforeAll(async () => {
    instance = await bed.start('pg-0', { role: 'primary', parameters: overrides });
  });
  afterAll(() => bed.cleanup());

  const settings = () =>
    withConnection(instance, bed.superuser, defaultConnectOptions, async (c) => {
      const result = await c.query<{
        name: string;
        setting: string;
        unit: string | null;
        sourcefile: string | null;
        sourceline: number | null;
      }>('SELECT name, setting, unit, sourcefile, sourceline FROM pg_settings');
      return new Map(result.rows.map((r) => [r.name, r]));
    });

  it("keeps the operator's settings whatever the parameters say, and lets them change its defaults", async () => {
    const s = await settings();
    const value = (name: string) => `${s.get(name)?.setting ?? '?'}${s.get(name)?.unit ?? ''}`;
    expect(value('wal_receiver_timeout')).toBe('3000ms');
    expect(value('wal_sender_timeout')).toBe('3000ms');
    expect(value('hot_standby_feedback')).toBe('on');
    expect(value('full_page_writes')).toBe('on');
    expect(value('recovery_min_apply_delay')).toBe('0ms');
    expect(value('wal_keep_size')).toBe('1024MB');
  });

  it('owns, in the API, every setting the entrypoint writes after the parameters', async () => {
    const conf = join(instance.dataDir, 'homeostat.conf');
    const lines = readFileSync(conf, 'utf8').split('\n');
    const ownedFrom = lines.indexOf('# Owned by the operator.') + 1; // 1-based line of the marker
    expect(ownedFrom).toBeGreaterThan(lines.indexOf('# PG_PARAMETERS') + 1);
    const written = lines
      .slice(ownedFrom)
      .map((l) => /^([a-z_]+) =/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined);
    expect(written.length).toBeGreaterThan(10);
    expect(written.filter((name) => !(name in operatorOwnedParameters))).toEqual([]);
    // And the server took each of them from that part of the file.
    const s = await settings();
    for (const name of written) {
      expect({
        name,
        file: s.get(name)?.sourcefile,
        after: (s.get(name)?.sourceline ?? 0) > ownedFrom,
      }).toEqual({
        name,
        file: conf,
        after: true,
      });
    }
  });

  it('stops with the cause as its termination message when PostgreSQL cannot take a parameter', async () => {
    const proc = await bed.runEntrypoint('pg-typo', {
      role: 'primary',
      parameters: "shared_bufers = '16MB'",
    });
    expect(await proc.exited).not.toBe(0);
    expect(readFileSync(bed.terminationLog('pg-typo'), 'utf8')).toMatch(
      /^the configuration is not valid: unrecognized configuration parameter "shared_bufers" in file ".*homeostat.conf" line \d+/,
    );
  });
});

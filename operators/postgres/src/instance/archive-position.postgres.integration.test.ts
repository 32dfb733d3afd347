// Switching the WAL segment and waiting for the archive, on a real PostgreSQL 15 whose
// archive_command copies each segment into a directory, with no archive_timeout: nothing but a
// switch closes a segment here, so a wait for the wrong segment would never end.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { switchAndAwaitArchive } from './archive-position.ts';
import { PlainPostgresBed, trustSuperuser, type PlainInstance } from '../test-support/plain-postgres.ts';

describe('switchAndAwaitArchive on a real PostgreSQL 15 archiving into a directory', () => {
  const bed = new PlainPostgresBed('pg-archive-position');
  let primary: PlainInstance;
  let archive: string;
  const sql = <T>(work: (c: pg.Client) => Promise<T>) =>
    withConnection(primary, trustSuperuser, defaultConnectOptions, work);

  beforeAll(async () => {
    archive = bed.directory('archive');
    primary = await bed.start('primary', bed.initdb('primary'), {
      settings: {
        wal_level: 'replica',
        archive_mode: 'on',
        archive_command: `test ! -f ${archive}/%f && cp %p ${archive}/%f`,
        archive_timeout: '0',
      },
    });
    await sql((c) => c.query('CREATE TABLE marks (id int)'));
  });
  afterAll(() => bed.cleanup());

  it('waits for the segment holding what was written before, and finds it in the archive', async () => {
    await sql((c) => c.query('INSERT INTO marks VALUES (1)'));
    const segment = await switchAndAwaitArchive(primary, trustSuperuser, defaultConnectOptions, 30_000);
    expect(existsSync(join(archive, segment))).toBe(true);
  });

  it('returns at once on a primary idle since its last switch, that segment already archived', async () => {
    // A switch with nothing written since the last one closes nothing: PostgreSQL answers with the
    // start of the segment in use (nothing in it yet), and pg_walfile_name names a position on a
    // segment's boundary after the segment that ends there, the one already archived.
    await sql((c) => c.query('INSERT INTO marks VALUES (2)'));
    const closed = await sql(
      async (c) =>
        (await c.query<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment')).rows[0]
          ?.segment ?? '',
    );
    const segment = await switchAndAwaitArchive(primary, trustSuperuser, defaultConnectOptions, 10_000);
    // The one just closed; or, if the background writer logged a record in between (at most one
    // each 15 s), the one that record went to, which this switch closed.
    expect(segment >= closed, `${segment} before ${closed}`).toBe(true);
    expect(existsSync(join(archive, segment))).toBe(true);
  });

  it('returns once the segment is archived, though a backup history file of an older segment was archived after it', async () => {
    // pg_backup_stop switches segments first and writes the backup's history file
    // (<older segment>.<offset>.backup) after, so an archiver woken by the switch can archive the
    // new segment before that file: last_archived_wal then names an older segment. Made here as
    // pg_backup_stop makes it: the history file and its .ready, the archiver woken by a reload.
    await sql((c) => c.query('INSERT INTO marks VALUES (3)'));
    const closed = await switchAndAwaitArchive(primary, trustSuperuser, defaultConnectOptions, 30_000);
    const older = (parseInt(closed.slice(16), 16) - 1).toString(16).toUpperCase().padStart(8, '0');
    const history = `${closed.slice(0, 16)}${older}.00000028.backup`;
    const pgWal = join(primary.dataDir, 'pg_wal');
    for (const file of [join(pgWal, history), join(pgWal, 'archive_status', `${history}.ready`)]) {
      writeFileSync(file, file.endsWith('.ready') ? '' : 'START WAL LOCATION: 0/28\n');
      bed.own(file);
    }
    await sql((c) => c.query('SELECT pg_reload_conf()'));
    const lastArchived = async () =>
      sql(
        async (c) =>
          (await c.query<{ wal: string | null }>('SELECT last_archived_wal AS wal FROM pg_stat_archiver'))
            .rows[0]?.wal,
      );
    await waitUntil('the history file archived', async () => (await lastArchived()) === history, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    // Nothing written since: the segment to wait for is the one archived before the history file.
    expect(await switchAndAwaitArchive(primary, trustSuperuser, defaultConnectOptions, 10_000)).toBe(closed);
  });
});

import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../test-support/test-cluster.ts';
import { closeDeadEnds, pauseWalReceiver } from '../test-support/replication-faults.ts';
import { observeInstance } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

afterAll(closeDeadEnds);

describe('a former primary that pg_rewind cannot bring back, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'keep-aside' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('is re-cloned with its old data kept aside, where its asynchronous tail can be recovered', async () => {
    await cluster.sql('pg-0', 'INSERT INTO acked (id) SELECT generate_series(1, 5)');
    await cluster.waitCaughtUp('pg-1', 'pg-0');
    await pauseWalReceiver(cluster, 'pg-1');
    // The asynchronous tail: acknowledged by pg-0 alone.
    await cluster.sql('pg-0', 'INSERT INTO acked (id) SELECT generate_series(6, 10)');
    const old = cluster.instance('pg-0');
    await old.kill9();
    await cluster.sql('pg-1', 'SELECT pg_promote()');

    // pg_rewind fails on a data directory without its control file; it is hidden, not destroyed,
    // so that the kept data can be started afterwards.
    const hidden = join(cluster.bed.root, 'pg-0', 'pg_control.hidden');
    renameSync(join(old.dataDir, 'global', 'pg_control'), hidden);
    await cluster.bed.start('pg-0', { role: 'replica', primary: cluster.instance('pg-1') });

    const log = cluster.bed.entrypointLog('pg-0');
    expect(log).toContainEqual(
      expect.stringContaining('rejoin: pg_rewind failed; falling back to a fresh clone'),
    );
    expect(log).toContainEqual(
      expect.stringMatching(
        /keep-aside: the former primary's data \(\d+ KiB\) is kept at .*data\.before-clone/,
      ),
    );
    await cluster.waitCaughtUp('pg-0', 'pg-1');
    expect(await cluster.ids('pg-0')).toEqual([1, 2, 3, 4, 5]);
    // The operator sees it (and reports it in the status and an Event).
    const observe = (name: string) =>
      observeInstance(cluster.instance(name), cluster.bed.superuser, defaultConnectOptions);
    expect(await observe('pg-0')).toMatchObject({ role: 'replica', formerDataKeptAside: true });
    expect(await observe('pg-1')).not.toHaveProperty('formerDataKeptAside');

    // The kept data starts (with its control file back) and holds the tail.
    const kept = `${old.dataDir}.before-clone`;
    expect(existsSync(kept)).toBe(true);
    renameSync(hidden, join(kept, 'global', 'pg_control'));
    mkdirSync(join(cluster.bed.root, 'pg-9'), { recursive: true });
    renameSync(kept, join(cluster.bed.root, 'pg-9', 'data'));
    writeFileSync(join(cluster.bed.root, 'pg-9', 'data', 'homeostat.ready'), 'pg-9\n', { mode: 0o644 });
    expect(await observe('pg-0')).not.toHaveProperty('formerDataKeptAside');
    await cluster.bed.start('pg-9', { role: 'primary' });
    expect(await cluster.ids('pg-9')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

// The delete step of a claim backup's retention, on real files: the snapshot, its record and an
// unfinished upload go; a backup already gone is no failure; a path out of the claim is refused.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteClaimBackup } from './claim-delete-agent.ts';

describe('deleteClaimBackup', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'homeostat-claim-delete-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('deletes the snapshot, its record and a leftover partial file, and nothing else', async () => {
    const file = join(dir, 'b-1.db');
    for (const name of ['b-1.db', 'b-1.db.json', 'b-1.db.partial', 'b-2.db', 'b-2.db.json'])
      await writeFile(join(dir, name), name);
    expect(await deleteClaimBackup(file)).toEqual([file, `${file}.json`, `${file}.partial`]);
    expect((await readdir(dir)).sort()).toEqual(['b-2.db', 'b-2.db.json']);
  });

  it('succeeds with nothing to delete when the files are already gone (a pod run again)', async () => {
    await writeFile(join(dir, 'b-1.db.json'), '{}');
    expect(await deleteClaimBackup(join(dir, 'b-1.db'))).toEqual([join(dir, 'b-1.db.json')]);
    expect(await deleteClaimBackup(join(dir, 'b-1.db'))).toEqual([]);
  });

  it('refuses a path that is relative or climbs out of its directory', async () => {
    await expect(deleteClaimBackup('backup/b.db')).rejects.toThrow(/not a plain absolute path/);
    await expect(deleteClaimBackup(`${dir}/../b.db`)).rejects.toThrow(/not a plain absolute path/);
  });
});

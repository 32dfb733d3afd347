import { describe, expect, it } from 'vitest';
import { planRecovery } from './recovery-target.ts';
import { backupAt } from './test-backups.ts';

const first = backupAt('20261101-000000F', '2026-11-01T00:10:00Z', '0/3000100', '000000010000000000000003');
const second = backupAt('20261102-000000F', '2026-11-02T00:10:00Z', '0/9000100', '000000010000000000000009');
const repository = {
  backups: [first, second],
  archive: { firstSegment: '000000010000000000000003', lastSegment: '00000001000000000000000C' },
};
const archiveEnd = { time: new Date('2026-11-03T00:00:00Z') };

describe('planRecovery', () => {
  it('picks the newest backup that ended before a time target', () => {
    expect(
      planRecovery(repository, { type: 'time', time: new Date('2026-11-01T12:00:00Z') }, archiveEnd),
    ).toEqual({
      ok: true,
      backup: first,
    });
    expect(
      planRecovery(repository, { type: 'time', time: new Date('2026-11-02T12:00:00Z') }, archiveEnd),
    ).toEqual({
      ok: true,
      backup: second,
    });
  });

  it('picks by LSN for an LSN target, the newest for the end of the archive or a restore point', () => {
    expect(planRecovery(repository, { type: 'lsn', lsn: '0/5000000' })).toEqual({ ok: true, backup: first });
    expect(planRecovery(repository, { type: 'latest' })).toEqual({ ok: true, backup: second });
    expect(planRecovery(repository, { type: 'name', name: 'before-migration' })).toEqual({
      ok: true,
      backup: second,
    });
  });

  it('refuses targets before the first backup ended, naming it and when it ended', () => {
    const early = planRecovery(
      repository,
      { type: 'time', time: new Date('2026-11-01T00:09:59Z') },
      archiveEnd,
    );
    expect(early).toEqual({
      ok: false,
      message:
        'cannot restore to time 2026-11-01T00:09:59.000Z: it is before the first backup (20261101-000000F) ended at 2026-11-01T00:10:00.000Z, the earliest moment the repository can restore',
    });
    const lsn = planRecovery(repository, { type: 'lsn', lsn: '0/3000000' });
    expect(lsn).toMatchObject({ ok: false });
    expect(lsn.ok ? '' : lsn.message).toContain(
      'before the first backup (20261101-000000F) ended at LSN 0/3000100',
    );
  });

  it('refuses targets past the archive', () => {
    const late = planRecovery(
      repository,
      { type: 'time', time: new Date('2026-11-03T00:00:01Z') },
      archiveEnd,
    );
    expect(late.ok ? '' : late.message).toContain(
      'past the end of the WAL archive (its newest segment was archived at 2026-11-03T00:00:00.000Z)',
    );
    // Segment 0C ends at 0/D000000.
    expect(planRecovery(repository, { type: 'lsn', lsn: '0/CFFFFFF' })).toEqual({ ok: true, backup: second });
    const past = planRecovery(repository, { type: 'lsn', lsn: '0/D000000' });
    expect(past.ok ? '' : past.message).toContain('archived up to LSN 0/D000000');
  });

  it('restores a named backup only to a target after it ended', () => {
    expect(planRecovery(repository, { type: 'latest' }, {}, first.label)).toEqual({
      ok: true,
      backup: first,
    });
    const before = planRecovery(repository, { type: 'lsn', lsn: '0/5000000' }, {}, second.label);
    expect(before.ok ? '' : before.message).toContain('the backup ended later');
    const missing = planRecovery(repository, { type: 'latest' }, {}, 'nope');
    expect(missing.ok ? '' : missing.message).toBe(
      'cannot restore backup nope: the repository has no such backup',
    );
  });

  it('refuses an empty repository and a malformed LSN', () => {
    expect(planRecovery({ backups: [] }, { type: 'latest' })).toEqual({
      ok: false,
      message: 'cannot restore to the end of the archive: the repository holds no backup',
    });
    expect(planRecovery(repository, { type: 'lsn', lsn: 'zz' }).ok).toBe(false);
  });
});

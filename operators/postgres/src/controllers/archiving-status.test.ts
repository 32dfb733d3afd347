// The ContinuousArchiving condition, status.backup and the Events, from what pg_stat_archiver says.
import { describe, expect, it } from 'vitest';
import type { ArchiverStatus } from '../instance/observe.ts';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import { archivedRecordIntervalMs, archivingReport } from './archiving-status.ts';

const s3 = {
  bucket: 'pg-backups',
  prefix: 'prod/',
  endpoint: 'https://s3.internal',
  credentialsSecretName: 'creds',
};
const cluster = storedCluster('orders', 'shop', { backup: { destination: { s3 } } });
const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 1, 0, s));
const archiver = (fields: Partial<ArchiverStatus>): ArchiverStatus => ({
  archivedCount: 0,
  lastArchivedWal: undefined,
  lastArchivedAt: undefined,
  failedCount: 0,
  lastFailedWal: undefined,
  lastFailedAt: undefined,
  ...fields,
});
const seen = (fields: Partial<ArchiverStatus>) => ({ primary: 'orders-0', archiver: archiver(fields) });
const archived = { archivedCount: 3, lastArchivedWal: '000000010000000000000003', lastArchivedAt: at(10) };

describe('archiving status', () => {
  it('is True while the primary archives, recording the last segment', () => {
    const report = archivingReport(cluster, seen(archived), at(11));
    expect(report.condition).toMatchObject({ status: 'True', reason: 'Archiving' });
    expect(report.condition?.message).toBe('orders-0 archives its WAL to s3://pg-backups/prod/');
    expect(report.backup).toEqual({
      lastArchivedWal: '000000010000000000000003',
      lastArchivedTime: at(10).toISOString(),
    });
    expect(report.event).toBeUndefined();
  });

  it('is False with the failing segment and since when, once per segment an Event, never tool output', () => {
    const failing = {
      ...archived,
      failedCount: 1,
      lastFailedWal: '000000010000000000000004',
      lastFailedAt: at(20),
    };
    const first = archivingReport(cluster, seen(failing), at(21));
    expect(first.condition).toMatchObject({ status: 'False', reason: 'ArchivingFailing' });
    expect(first.condition?.message).toContain(
      `fails to archive WAL segment 000000010000000000000004 to s3://pg-backups/prod/ since ${at(20).toISOString()}`,
    );
    expect(first.condition?.message).toContain('credentials Secret creds');
    expect(first.event).toMatchObject({ type: 'Warning', reason: 'ArchivingFailing' });
    // The archiver retries the same segment: same message (no status churn), no second Event.
    const stored = { ...cluster, status: { ...(first.backup ? { backup: first.backup } : {}) } };
    const again = archivingReport(stored, seen({ ...failing, failedCount: 4, lastFailedAt: at(80) }), at(81));
    expect(again.condition?.message).toBe(first.condition?.message);
    expect(again.event).toBeUndefined();
    // Another segment failing is a new failure.
    const next = archivingReport(
      stored,
      seen({ ...failing, lastFailedWal: '000000010000000000000005' }),
      at(90),
    );
    expect(next.event?.reason).toBe('ArchivingFailing');
    // Then a success: True again, and a Normal Event saying it resumed.
    const resumed = archivingReport(
      stored,
      seen({ ...failing, lastArchivedWal: '000000010000000000000004', lastArchivedAt: at(95) }),
      at(96),
    );
    expect(resumed.condition?.status).toBe('True');
    expect(resumed.backup).toEqual({
      lastArchivedWal: '000000010000000000000004',
      lastArchivedTime: at(95).toISOString(),
    });
    expect(resumed.event).toMatchObject({ type: 'Normal', reason: 'ArchivingResumed' });
  });

  it('records a busy archive at most every 10 s', () => {
    const recorded = {
      ...cluster,
      status: {
        backup: { lastArchivedWal: '000000010000000000000003', lastArchivedTime: at(10).toISOString() },
      },
    };
    const soon = archivingReport(
      recorded,
      seen({ lastArchivedWal: '000000010000000000000009', lastArchivedAt: at(15) }),
      at(15),
    );
    expect(soon.backup?.lastArchivedWal).toBe('000000010000000000000003');
    const later = new Date(at(10).getTime() + archivedRecordIntervalMs);
    const due = archivingReport(
      recorded,
      seen({ lastArchivedWal: '00000001000000000000000A', lastArchivedAt: later }),
      later,
    );
    expect(due.backup?.lastArchivedWal).toBe('00000001000000000000000A');
  });

  it('says a primary not archiving yet waits for its restart; keeps what it had when the primary was not seen', () => {
    const pending = archivingReport(cluster, { primary: 'orders-0', archiver: undefined });
    expect(pending.condition).toMatchObject({ status: 'False', reason: 'ArchivingNotStarted' });
    expect(archivingReport(cluster, undefined)).toEqual({ condition: undefined, backup: undefined });
    expect(archivingReport(storedCluster('orders', 'shop'), seen(archived))).toEqual({
      condition: undefined,
      backup: undefined,
    });
  });

  it('never carries the fields of the base backups, which the backup schedule writes, into what it applies', () => {
    const withSchedule = {
      ...cluster,
      status: {
        backup: {
          lastArchivedWal: '000000010000000000000003',
          lastArchivedTime: at(10).toISOString(),
          lastBackupTime: at(5).toISOString(),
          lastBackupLabel: '20261127-010005F',
          lastScheduledBackup: 'orders-202611270100',
          nextScheduledBackupTime: at(60).toISOString(),
        },
      },
    };
    const expected = { lastArchivedWal: '000000010000000000000003', lastArchivedTime: at(10).toISOString() };
    expect(archivingReport(withSchedule, undefined).backup).toEqual(expected);
    expect(archivingReport(withSchedule, seen(archived), at(11)).backup).toEqual(expected);
    expect(archivingReport(withSchedule, { primary: 'orders-0', archiver: undefined }).backup).toEqual(
      expected,
    );
  });
});

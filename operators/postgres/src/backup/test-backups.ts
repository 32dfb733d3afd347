// Backup records for the unit tests of the pure planning functions.
import { parseLsn } from '../instance/lsn.ts';
import type { BackupRecord } from './repository-info.ts';

/** A full backup that ended at `stop` (ISO time) and at LSN `endLsn`, its WAL from `walStart`. */
export function backupAt(label: string, stop: string, endLsn: string, walStart: string): BackupRecord {
  const stopTime = new Date(stop);
  return {
    label,
    type: 'full',
    startTime: new Date(stopTime.getTime() - 5000),
    stopTime,
    beginLsn: parseLsn(endLsn) - 100n,
    endLsn: parseLsn(endLsn),
    walStart,
    walStop: walStart,
    databaseBytes: 1000,
    storedBytes: 100,
    repositoryFormat: 5,
    toolVersion: '2.45',
  };
}

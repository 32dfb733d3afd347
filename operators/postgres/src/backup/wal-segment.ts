// WAL segment file names ("000000010000000000000003": timeline, then the position in 16 MiB
// steps by default) and the WAL range they cover, to compare an LSN target with the archive.
import type { Lsn } from '../instance/lsn.ts';

/** PostgreSQL's default wal_segment_size; the operator never changes it. */
export const defaultSegmentBytes = 16n * 1024n * 1024n;

const segmentName = /^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$/;

/** True for a WAL segment's file name (not a history, backup or partial file). */
export function isSegmentName(name: string): boolean {
  return segmentName.test(name);
}

/** The first LSN a segment holds and the first one after it. */
export function segmentRange(name: string, segmentBytes = defaultSegmentBytes): { start: Lsn; end: Lsn } {
  const match = segmentName.exec(name);
  if (!match?.[2] || !match[3]) throw new Error(`not a WAL segment name: '${name}'`);
  const segmentsPerId = 0x100000000n / segmentBytes;
  const index = BigInt(`0x${match[2]}`) * segmentsPerId + BigInt(`0x${match[3]}`);
  const start = index * segmentBytes;
  return { start, end: start + segmentBytes };
}

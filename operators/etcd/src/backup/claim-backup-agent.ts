// What the operator image runs in the short-lived pod that writes a backup into a
// PersistentVolumeClaim (docs/adr/0302): the operator cannot mount a claim, this pod does. It
// streams the snapshot from etcd with the engine (takeBackup) into the file sink on the claim
// (`<name>.partial`, fsync, renamed only once the sha256 trailer checks) and leaves the backup
// record as its termination message, which the operator reads into the EtcdBackup's status.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EtcdConnection } from '../connection.ts';
import { fileSnapshotSink } from './file-sink.ts';
import { takeBackup } from './take-backup.ts';

/** Where the kubelet takes a container's termination message from. */
export const terminationLog = '/dev/termination-log';

export interface ClaimBackupRequest {
  readonly endpoints: readonly string[];
  /** A directory holding ca.crt, tls.crt and tls.key, when the cluster uses TLS. */
  readonly tlsDir?: string;
  /** The directory in the claim, and the file name in it. */
  readonly directory: string;
  readonly name: string;
  readonly resultFile: string;
}

/** Takes the backup into the claim and writes its record (JSON) to `resultFile`. */
export async function backupToClaim(request: ClaimBackupRequest): Promise<string> {
  const credentials: EtcdConnection['credentials'] = request.tlsDir
    ? {
        rootCertificate: await readFile(join(request.tlsDir, 'ca.crt')),
        certChain: await readFile(join(request.tlsDir, 'tls.crt')),
        privateKey: await readFile(join(request.tlsDir, 'tls.key')),
      }
    : undefined;
  // The file on the claim is local: the record gets the exact revision, read from its pages.
  const record = await takeBackup(
    { endpoints: request.endpoints, ...(credentials ? { credentials } : {}) },
    fileSnapshotSink(request.directory),
    { name: request.name },
  );
  const result = JSON.stringify(record);
  await writeFile(request.resultFile, result);
  return result;
}

// What the operator image runs in the short-lived pod that writes a backup into a
// PersistentVolumeClaim (docs/adr/0302): the operator cannot mount a claim, this pod does. It
// streams the snapshot from etcd with the engine (takeBackup) into the file sink on the claim
// (`<name>.partial`, fsync, renamed only once the sha256 trailer checks) and leaves the backup
// record as its termination message, which the operator reads into the EtcdBackup's status.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EtcdConnection } from '../connection.ts';
import { fileSnapshotSink } from './file-sink.ts';
import type { SnapshotSink } from './snapshot-sink.ts';
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
  const files = fileSnapshotSink(request.directory);
  // The operator image has no etcdutl: the sink hides its local file, so the record gives the
  // revision read before the stream (a lower bound), as a backup to S3 does.
  const sink: SnapshotSink = {
    async create(name) {
      return { ...(await files.create(name)), localPath: undefined };
    },
  };
  const record = await takeBackup(
    { endpoints: request.endpoints, ...(credentials ? { credentials } : {}) },
    sink,
    { name: request.name, etcdutlPath: 'etcdutl' },
  );
  const result = JSON.stringify(record);
  await writeFile(request.resultFile, result);
  return result;
}

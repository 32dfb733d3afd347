// The commands the operator image runs in pods the operator makes (docs/adr/0302), instead of the
// operator: the restore steps of a restored member, a backup written into, or deleted from, a
// claim, and the check of a restore drill's scratch etcd.
import { backupToClaim } from './claim-backup-agent.ts';
import { checkRestoredBackup } from './restored-hash-agent.ts';
import { deleteClaimBackup } from './claim-delete-agent.ts';
import { writeFile } from 'node:fs/promises';
import { messageOf } from '../errors.ts';
import { verifySnapshotFile } from '../restore/verify-snapshot-file.ts';
import { copySnapshot, fetchSnapshot, finishRestore, skipFetchForMemberData } from './restore-agent.ts';

export const agentCommands = [
  'fetch-backup',
  'copy-backup',
  'finish-restore',
  'backup-to-claim',
  'verify-claim-backup',
  'delete-claim-backup',
  'check-restored-backup',
];

/** Runs one agent command line (`--name=value` flags; S3 credentials from the environment). */
export async function runAgent(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [command = '', ...rest] = argv;
  const flags = new Map(
    rest.map((arg) => {
      const [name = '', ...value] = arg.replace(/^--/, '').split('=');
      return [name, value.join('=')] as const;
    }),
  );
  const required = (name: string) => {
    const value = flags.get(name);
    if (!value) throw new Error(`${command}: --${name} is required`);
    return value;
  };
  // One JSON line per step on stderr, where the kubelet keeps a container's log.
  const log = (line: string) => console.error(JSON.stringify({ msg: line, step: command }));
  if (command === 'backup-to-claim') {
    const tlsDir = flags.get('tls-dir');
    log(
      await backupToClaim({
        endpoints: required('endpoints').split(','),
        directory: required('directory'),
        name: required('name'),
        resultFile: required('result-file'),
        ...(tlsDir ? { tlsDir } : {}),
      }),
    );
    return;
  }
  if (command === 'check-restored-backup') {
    log(
      await checkRestoredBackup({
        endpoint: required('endpoint'),
        revision: required('revision'),
        waitSeconds: Number(flags.get('wait-seconds') ?? '600'),
        resultFile: required('result-file'),
      }),
    );
    return;
  }
  if (command === 'delete-claim-backup') {
    const removed = await deleteClaimBackup(required('file'));
    await writeFile(required('result-file'), JSON.stringify({ removed }));
    log(removed.length ? `deleted ${removed.join(', ')}` : `${required('file')} was already gone`);
    return;
  }
  const expectedSha256 = flags.get('sha256');
  if (command === 'verify-claim-backup') {
    // The operator cannot read a claim: this pod reads the file through its checks and leaves
    // what it found (or why it refused) as its termination message.
    let verified;
    try {
      verified = await verifySnapshotFile(required('file'), expectedSha256);
    } catch (error) {
      // Why, in one line, as the pod's termination message (the kubelet reads the file first).
      await writeFile(required('result-file'), messageOf(error));
      throw error;
    }
    await writeFile(
      required('result-file'),
      JSON.stringify({ sizeBytes: verified.sizeBytes, sha256: verified.sha256 }),
    );
    log(`verified ${required('file')}: ${verified.sizeBytes} bytes, sha256 ${verified.sha256}`);
    return;
  }
  const paths = { dataDir: required('data-dir'), workDir: required('work-dir') };
  if (command === 'finish-restore') return finishRestore(paths, log);
  if (await skipFetchForMemberData(paths, log)) return;
  if (command === 'copy-backup') {
    return copySnapshot(
      { ...paths, source: required('source'), ...(expectedSha256 ? { expectedSha256 } : {}) },
      log,
    );
  }
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('fetch-backup: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set');
  }
  const sessionToken = env['AWS_SESSION_TOKEN'];
  const endpoint = flags.get('endpoint');
  await fetchSnapshot(
    {
      ...paths,
      bucket: required('bucket'),
      key: required('key'),
      region: required('region'),
      forcePathStyle: flags.get('force-path-style') === 'true',
      ...(endpoint ? { endpoint } : {}),
      ...(expectedSha256 ? { expectedSha256 } : {}),
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    },
    log,
  );
}

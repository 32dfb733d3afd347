import { execFile } from 'node:child_process';

/** Runs etcdutl with `args`; resolves with stdout, rejects with etcdutl's own stderr in the message. */
export function runEtcdutl(
  etcdutlPath: string,
  args: readonly string[],
  timeoutMs = 600_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      etcdutlPath,
      [...args],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`${etcdutlPath} ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

/** What `etcdutl snapshot status` reads from a snapshot file. */
export interface SnapshotFileStatus {
  readonly revision: string;
  readonly totalKeys: number;
  readonly totalSizeBytes: number;
  readonly storageVersion: string;
}

/** Reads the revision and key count stored in a snapshot file (etcdutl opens the bbolt database). */
export async function snapshotFileStatus(etcdutlPath: string, file: string): Promise<SnapshotFileStatus> {
  const out = await runEtcdutl(etcdutlPath, ['snapshot', 'status', file, '--write-out=json']);
  const parsed = JSON.parse(out) as {
    revision?: number;
    totalKey?: number;
    totalSize?: number;
    version?: string;
  };
  // A revision is an int64 that JSON.parse would round above 2^53; take its digits from the text.
  const revision = /"revision"\s*:\s*(\d+)/.exec(out)?.[1] ?? String(parsed.revision ?? 0);
  return {
    revision,
    totalKeys: parsed.totalKey ?? 0,
    totalSizeBytes: parsed.totalSize ?? 0,
    storageVersion: parsed.version ?? '',
  };
}

// What the operator image runs beside the scratch etcd of a restore drill (ADR 0311): it waits for
// the restored etcd to answer on the pod's loopback, reads its HashKV at the backup's revision and
// leaves what it measured as its termination message. It decides nothing: the operator compares
// the hash with the one recorded at backup time, so a pod cannot call a backup good by itself.
import { writeFile } from 'node:fs/promises';
import { withMemberClient } from '../connection.ts';
import { messageOf } from '../errors.ts';
import { memberHashKV } from '../health/hash-kv.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RestoredHashRequest {
  readonly endpoint: string;
  readonly revision: string;
  readonly waitSeconds: number;
  readonly resultFile: string;
}

/** What the check leaves for the operator. */
export interface RestoredHash {
  readonly hashKV: string;
  readonly compactRevision: string;
  /** The restored copy's newest revision (at least the backup's). */
  readonly currentRevision: string;
  /** When the restored etcd first answered, as this pod's clock says. */
  readonly answeredAt: string;
}

async function currentRevision(endpoint: string): Promise<string> {
  return withMemberClient({ endpoints: [endpoint], callTimeoutMs: 2000 }, endpoint, async (client) => {
    const status = await client.maintenance.status();
    return status.header.revision;
  });
}

/** Waits for the restored etcd, reads HashKV at `revision`, and writes the result (or why not) to the result file. */
export async function checkRestoredBackup(request: RestoredHashRequest): Promise<string> {
  const deadline = Date.now() + request.waitSeconds * 1000;
  let last: unknown;
  let revision: string | undefined;
  // etcd opens its database before it answers; the check started with it and waits.
  while (revision === undefined) {
    try {
      revision = await currentRevision(request.endpoint);
    } catch (error) {
      last = error;
      if (Date.now() > deadline) {
        const message = `the restored etcd did not answer within ${request.waitSeconds} s: ${messageOf(last)}`;
        await writeFile(request.resultFile, message);
        throw new Error(message);
      }
      await sleep(500);
    }
  }
  const answeredAt = new Date().toISOString();
  if (BigInt(revision) < BigInt(request.revision)) {
    const message = `the restored copy ends at revision ${revision}, before the backup's ${request.revision}`;
    await writeFile(request.resultFile, message);
    throw new Error(message);
  }
  let hashed;
  try {
    hashed = await withMemberClient(
      { endpoints: [request.endpoint], callTimeoutMs: 60_000 },
      request.endpoint,
      (client) => memberHashKV(client, request.revision),
    );
  } catch (error) {
    const message = `HashKV at revision ${request.revision} of the restored copy failed: ${messageOf(error)}`;
    await writeFile(request.resultFile, message);
    throw new Error(message, { cause: error });
  }
  const result: RestoredHash = {
    hashKV: hashed.hash,
    compactRevision: hashed.compactRevision,
    currentRevision: revision,
    answeredAt,
  };
  const line = JSON.stringify(result);
  await writeFile(request.resultFile, line);
  return line;
}

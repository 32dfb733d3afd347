import { readdir } from 'node:fs/promises';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { runEtcdutl } from '../etcdutl.ts';
import type { VerifiedSnapshot } from '../backup/snapshot-trailer.ts';
import type { RestorePlan } from './restore-plan.ts';
import { verifySnapshotFile } from './verify-snapshot-file.ts';

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/**
 * Runs a restore plan: verifies the snapshot's sha256 trailer (and the recorded hash, if given) before
 * touching anything, checks that no data directory holds data, then runs etcdutl for every member.
 */
export async function runRestore(
  plan: RestorePlan,
  options: { expectedSha256?: string } = {},
): Promise<VerifiedSnapshot> {
  const verified = await verifySnapshotFile(plan.snapshotPath, options.expectedSha256);
  for (const step of plan.steps) {
    if (!(await isEmptyOrMissing(step.member.dataDir))) {
      throw new EtcdEngineError(
        'restore',
        'RestoreFailed',
        `data dir ${step.member.dataDir} already holds data; a restore never overwrites a member`,
        { member: step.member.name },
      );
    }
  }
  for (const step of plan.steps) {
    try {
      // No --skip-hash-check: etcdutl checks the trailer again, independently of us.
      await runEtcdutl(step.command, step.args);
    } catch (error) {
      throw new EtcdEngineError('restore', 'RestoreFailed', messageOf(error), {
        member: step.member.name,
        cause: error,
      });
    }
  }
  return verified;
}

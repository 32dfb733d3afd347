import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { runEtcdutl } from '../etcdutl.ts';
import type { VerifiedSnapshot } from '../backup/snapshot-trailer.ts';
import type { RestorePlan } from './restore-plan.ts';
import { checkSnapshotShape, verifySnapshotFile } from './verify-snapshot-file.ts';

/** 'missing', 'empty', or 'data' (anything in it). */
async function dataDirState(dir: string): Promise<'missing' | 'empty' | 'data'> {
  try {
    return (await readdir(dir)).length === 0 ? 'empty' : 'data';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

/** Removes what etcdutl wrote into `dir`; the directory itself goes only if it was not there before. */
async function undoRestore(dir: string, existedBefore: boolean): Promise<void> {
  if (!existedBefore) {
    await rm(dir, { recursive: true, force: true });
    return;
  }
  // An empty directory that was there before may be a mount point: keep it, empty it again.
  const entries = await readdir(dir).catch(() => []);
  await Promise.all(entries.map((entry) => rm(join(dir, entry), { recursive: true, force: true })));
}

async function runSteps(plan: RestorePlan): Promise<void> {
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
}

/**
 * Runs a restore plan. Before touching anything it checks the snapshot's shape (size, and its
 * trailer against the recorded hash, if given) and that no data directory holds data. Then it
 * hashes the whole snapshot while etcdutl restores every member: the hash read costs as much as
 * half a restore, and on two cores the two run side by side. When our hash refuses the snapshot,
 * the data directories (empty or missing before, so ours) are removed and the refusal is what the
 * caller sees, even if etcdutl refused too.
 */
export async function runRestore(
  plan: RestorePlan,
  options: { expectedSha256?: string } = {},
): Promise<VerifiedSnapshot> {
  await checkSnapshotShape(plan.snapshotPath, options.expectedSha256);
  const existedBefore = new Map<string, boolean>();
  for (const step of plan.steps) {
    const state = await dataDirState(step.member.dataDir);
    existedBefore.set(step.member.dataDir, state === 'empty');
    if (state === 'data') {
      throw new EtcdEngineError(
        'restore',
        'RestoreFailed',
        `data dir ${step.member.dataDir} already holds data; a restore never overwrites a member`,
        { member: step.member.name },
      );
    }
  }
  const [verified, restored] = await Promise.allSettled([
    verifySnapshotFile(plan.snapshotPath, options.expectedSha256),
    runSteps(plan),
  ]);
  if (verified.status === 'rejected') {
    await Promise.all(
      plan.steps.map((step) =>
        undoRestore(step.member.dataDir, existedBefore.get(step.member.dataDir) ?? false),
      ),
    );
    throw verified.reason;
  }
  if (restored.status === 'rejected') throw restored.reason;
  return verified.value;
}

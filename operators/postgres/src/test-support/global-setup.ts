import type { TestProject } from 'vitest/node';
import { controlPlaneGlobalSetup } from '@homeostat/testing/global-setup';
import { releaseOrphanedSharedMemory } from './orphaned-shared-memory.ts';

const startControlPlane = controlPlaneGlobalSetup();

// Shared memory that killed PostgreSQL processes left (see orphaned-shared-memory.ts) is swept
// before the run, so the runs before it cannot exhaust the machine's segments, and after it.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  releaseOrphanedSharedMemory();
  const stopControlPlane = await startControlPlane(project);
  return async () => {
    await stopControlPlane();
    releaseOrphanedSharedMemory(undefined, 1000);
  };
}

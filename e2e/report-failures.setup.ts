// Every suite's failed test leaves a report of the cluster as the failure left it (see
// harness/failure-diagnostics.ts), taken before the suite's afterAll deletes its namespace.
import { afterEach } from 'vitest';
import { reportFailure } from './harness/failure-diagnostics.ts';

afterEach(async (context) => {
  if (context.task.result?.state !== 'fail') return;
  const report = await reportFailure(context.task.name);
  console.error(`\n===== the cluster after "${context.task.name}" failed\n${report}\n===== end of report\n`);
}, 120_000);

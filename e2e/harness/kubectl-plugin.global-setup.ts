// Installs `kubectl homeostat` once per e2e run, as a user does (the install script into a
// directory), for the suites' kubectl to find on PATH; the directory goes when the run ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';

export default async function setup(project: TestProject): Promise<() => void> {
  const directory = mkdtempSync(join(tmpdir(), 'kubectl-homeostat-'));
  await run(
    process.execPath,
    [join(repoRoot, 'cli', 'kubectl-homeostat', 'scripts', 'install.ts'), directory],
    {
      timeoutMs: 120_000,
    },
  );
  project.provide('homeostat.kubectlPluginDir', directory);
  return () => rmSync(directory, { recursive: true, force: true });
}

// `kubectl homeostat`, as a user runs it: the plugin installed by its install script into a
// directory on PATH, found by kubectl itself, against the cluster in KUBECONFIG.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { binaryPath, repoRoot } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { kubeconfigPath } from './cluster-access.ts';

let installed: Promise<string> | undefined;

/** Installs the plugin once per process (`npm run kubectl-plugin -- <dir>` does the same). */
function pluginDirectory(): Promise<string> {
  installed ??= (async () => {
    const directory = mkdtempSync(join(tmpdir(), 'kubectl-homeostat-'));
    await run(
      process.execPath,
      [join(repoRoot, 'cli', 'kubectl-homeostat', 'scripts', 'install.ts'), directory],
      {
        timeoutMs: 120_000,
      },
    );
    return directory;
  })();
  return installed;
}

/** `kubectl homeostat <args>`; resolves with stdout, rejects with the plugin's message. */
export async function kubectlHomeostat(args: readonly string[]): Promise<string> {
  const kubectl = binaryPath('kubectl');
  const path = [
    await pluginDirectory(),
    dirname(kubectl),
    dirname(process.execPath),
    process.env['PATH'] ?? '',
  ];
  return run(kubectl, ['homeostat', ...args], {
    timeoutMs: 600_000,
    input: '',
    env: { ...process.env, PATH: path.join(delimiter), KUBECONFIG: kubeconfigPath(), KUBECTL: kubectl },
  });
}

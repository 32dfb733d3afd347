// Helm, as users run it: the pinned helm binary against the cluster in KUBECONFIG.
import { join } from 'node:path';
import { binaryPath, repoRoot } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { kubeconfigPath } from './cluster-access.ts';

// Built from the Go module proxy on first use (a no-op when cached), so `npm start` and the
// suites work on a machine where nothing has built helm yet.
let helmBuilt: Promise<string> | undefined;

/** Runs helm with the suites' kubeconfig; errors carry helm's stderr. */
export async function helm(args: readonly string[]): Promise<string> {
  helmBuilt ??= run('bash', [join(repoRoot, 'tools', 'build-binaries.sh'), 'helm'], {
    timeoutMs: 30 * 60_000,
  });
  await helmBuilt;
  return run(binaryPath('helm'), [`--kubeconfig=${kubeconfigPath()}`, ...args], { timeoutMs: 600_000 });
}

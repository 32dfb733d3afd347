// Helm, as users run it: the pinned helm binary against the cluster in KUBECONFIG.
import { binaryPath } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { kubeconfigPath } from './cluster-access.ts';

/** Runs helm with the suites' kubeconfig; errors carry helm's stderr. */
export function helm(args: readonly string[]): Promise<string> {
  return run(binaryPath('helm'), [`--kubeconfig=${kubeconfigPath()}`, ...args], { timeoutMs: 600_000 });
}

// Helm, as users run it: the pinned helm binary against the cluster in KUBECONFIG.
import { join } from 'node:path';
import { binaryPath, repoRoot } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { kubeconfigPath } from './cluster-access.ts';

// Built from the Go module proxy on first use (a no-op when cached), so `npm start` and the
// suites work on a machine where nothing has built helm yet.
let helmBuilt: Promise<string> | undefined;

function helmBinary(): Promise<string> {
  helmBuilt ??= run('bash', [join(repoRoot, 'tools', 'build-binaries.sh'), 'helm'], {
    timeoutMs: 30 * 60_000,
  }).then(() => binaryPath('helm'));
  return helmBuilt;
}

/** Runs helm with the suites' kubeconfig; errors carry helm's stderr. */
export async function helm(args: readonly string[]): Promise<string> {
  return run(await helmBinary(), [`--kubeconfig=${kubeconfigPath()}`, ...args], { timeoutMs: 600_000 });
}

const vendored = new Map<string, Promise<string>>();

/**
 * The chart folder, with its dependencies (the homeostat-operator-lib library chart) vendored
 * into its charts/ by `helm dependency build`, as a user does before installing from a clone
 * (ADR 0010). Done once per process and chart, so a library edited since the last run is used.
 */
export function installableChart(chartDir: string): Promise<string> {
  let built = vendored.get(chartDir);
  if (!built) {
    built = helmBinary().then(async (binary) => {
      await run(binary, ['dependency', 'build', chartDir], { timeoutMs: 120_000 });
      return chartDir;
    });
    vendored.set(chartDir, built);
  }
  return built;
}

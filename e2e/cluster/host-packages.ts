// The Debian packages a step runs (containerd, iptables, Docker, debootstrap …), installed when
// missing by tools/require-packages.sh. Required where they are used, so a job on someone else's
// cluster (npm start --current-kubeconfig, e2e with KUBECONFIG) installs none of them.
import { join } from 'node:path';
import { repoRoot } from '@homeostat/testing';
import { run } from './run-command.ts';

/** `cluster`: the local cluster's host tools; `images`: debootstrap and Docker for image builds; `kind`: the offline kind cluster's. */
export async function requireHostPackages(
  ...sets: readonly ('cluster' | 'images' | 'kind')[]
): Promise<void> {
  await run('bash', [join(repoRoot, 'tools', 'require-packages.sh'), ...sets], { timeoutMs: 20 * 60_000 });
}

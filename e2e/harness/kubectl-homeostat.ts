// `kubectl homeostat`, as a user runs it: the plugin installed by its install script into a
// directory on PATH (kubectl-plugin.global-setup.ts), found by kubectl itself, against the cluster
// in KUBECONFIG.
import { delimiter, dirname } from 'node:path';
import { inject } from 'vitest';
import { binaryPath } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { kubeconfigPath } from './cluster-access.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where kubectl-plugin.global-setup.ts installed the plugin for this run. */
    'homeostat.kubectlPluginDir': string;
  }
}

/** `kubectl homeostat <args>`; resolves with stdout, rejects with the plugin's message. */
export async function kubectlHomeostat(args: readonly string[]): Promise<string> {
  const kubectl = binaryPath('kubectl');
  const path = [
    inject('homeostat.kubectlPluginDir'),
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

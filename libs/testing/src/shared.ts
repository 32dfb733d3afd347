import { inject } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import './global-setup.ts';

/** The kubeconfig file of the control plane started by `controlPlaneGlobalSetup`. */
export function sharedKubeconfigPath(): string {
  const path = inject('homeostat.kubeconfigPath');
  if (!path) {
    throw new Error(
      'no shared control plane: add a globalSetup built with controlPlaneGlobalSetup() to vitest.config.ts',
    );
  }
  return path;
}

/** A client configuration for the shared control plane (cluster admin). */
export function sharedKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sharedKubeconfigPath());
  return kubeConfig;
}

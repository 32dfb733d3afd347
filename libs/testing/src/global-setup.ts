import type { TestProject } from 'vitest/node';
import { startControlPlane, type ControlPlaneOptions } from './control-plane.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the kubeconfig of the control plane shared by every test file of this run. */
    'homeostat.kubeconfigPath': string;
  }
}

/**
 * Builds a vitest global setup that starts one control plane for all test files of a project
 * and stops it after the run. Use it from a file named in `test.globalSetup`:
 *   export default controlPlaneGlobalSetup({ crds: [...] });
 * Tests reach it through `sharedKubeConfig()` from `@homeostat/testing/shared`.
 */
export function controlPlaneGlobalSetup(options: ControlPlaneOptions = {}) {
  return async function setup(project: TestProject): Promise<() => Promise<void>> {
    const controlPlane = await startControlPlane(options);
    project.provide('homeostat.kubeconfigPath', controlPlane.kubeconfigPath);
    return () => controlPlane.stop();
  };
}

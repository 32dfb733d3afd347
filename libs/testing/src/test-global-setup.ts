// The control plane shared by libs/testing's own test files, with the Widget test CRD installed.
import { fileURLToPath } from 'node:url';
import { controlPlaneGlobalSetup } from './global-setup.ts';

export default controlPlaneGlobalSetup({
  crds: [fileURLToPath(new URL('../fixtures/widgets.testing.homeostat.dev.yaml', import.meta.url))],
});

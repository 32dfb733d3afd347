import { controlPlaneGlobalSetup } from '@homeostat/testing/global-setup';

export default controlPlaneGlobalSetup();

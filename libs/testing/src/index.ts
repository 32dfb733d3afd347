export { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.ts';
export { installCrds } from './crds.ts';
export {
  binaryPath,
  sourceKeyedBinaryPath,
  type SourceKeyedComponent,
  cacheDir,
  etcdBinaryPath,
  etcdVersion,
  kubernetesVersion,
  pinnedKubernetesVersion,
  pinnedEtcdVersions,
  pinnedKubernetesVersions,
  repoRoot,
  toolVersion,
} from './binaries.ts';
export type { EtcdComponent, KubernetesComponent, ToolComponent } from './binaries.ts';
export {
  startProcess,
  diesWithParent,
  logTail,
  type ManagedProcess,
  type StartProcessOptions,
} from './managed-process.ts';
export { freeLoopbackPort } from './free-port.ts';
export { consistently, waitUntil } from './readiness.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
export {
  createControlPlanePki,
  createTestCa,
  issueTestCertificate,
  type ControlPlanePki,
  type TestCertificate,
  type TestCertificateRequest,
} from './pki.ts';
export { writeAdminKubeconfig } from './kubeconfig.ts';
export { httpGet } from './readiness.ts';
export {
  ProcessKubelet,
  ContainerFailure,
  type Completion,
  type Container,
  type ContainerProcess,
  type KubeletApi,
  type PodContext,
  type PodRuntime,
  type ProcessKubeletOptions,
  type Run,
  type Sandbox,
} from './process-kubelet.ts';

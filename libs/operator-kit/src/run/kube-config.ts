// The one place an operator process gets its API server credentials from.
import { KubeConfig } from '@kubernetes/client-node';

/** The pod's service account in a cluster; outside one, $KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}

// The shape every add-on the local cluster runs shares (CoreDNS, the volume provisioner): one
// replica, system-critical, non-root with a read-only root filesystem and no capabilities, its
// configuration from a ConfigMap mounted read-only.
import { oneReplicaDeployment } from './one-replica-deployment.ts';

export interface AddonDeployment {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  serviceAccountName: string;
  /** The container, without what this builder adds (image pull policy, security, the config mount). */
  container: { name: string; image: string } & Record<string, unknown>;
  /** The ConfigMap mounted read-only at `mountPath`. */
  config: { configMap: string; mountPath: string };
  /** Pod fields beyond the common ones, e.g. `dnsPolicy`. */
  podSpec?: Record<string, unknown>;
}

const unprivilegedUser = 65532;

/** A Deployment object for an add-on of the local cluster. */
export function addonDeployment(addon: AddonDeployment): object {
  const { name, namespace, labels } = addon;
  return oneReplicaDeployment({
    name,
    namespace,
    labels,
    podSpec: {
      serviceAccountName: addon.serviceAccountName,
      priorityClassName: 'system-cluster-critical',
      ...addon.podSpec,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: unprivilegedUser,
        runAsGroup: unprivilegedUser,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          imagePullPolicy: 'IfNotPresent',
          ...addon.container,
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [{ name: 'config', mountPath: addon.config.mountPath, readOnly: true }],
        },
      ],
      volumes: [{ name: 'config', configMap: { name: addon.config.configMap } }],
    },
  });
}

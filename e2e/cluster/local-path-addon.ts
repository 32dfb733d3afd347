// The default StorageClass: Rancher's local-path-provisioner, as kind ships it, so a
// PersistentVolumeClaim of an operand (etcd members, PostgreSQL instances) binds to a directory on
// the node without anyone creating volumes by hand. Each volume is a directory under
// `paths.localVolumes`, made world-writable by a helper pod so that members running as any
// non-root user (Pod Security `restricted`) can write to it; `down` removes them with the rest of
// the cluster's state.
import { clusterImages } from '../images/image-names.ts';
import { addonDeployment } from './addon-deployment.ts';
import { paths } from './layout.ts';

/** The default StorageClass's name: kind's, so the suites run unchanged on either cluster. */
export const defaultStorageClass = 'standard';

const namespace = 'local-path-storage';
const name = 'local-path-provisioner';
const labels = { 'app.kubernetes.io/name': name };

// The provisioner runs these in a helper pod on the volume's node, with the parent directory
// mounted; VOL_DIR is the volume's directory.
const setup = `#!/bin/sh
set -eu
mkdir -m 0777 -p "$VOL_DIR"
`;
const teardown = `#!/bin/sh
set -eu
rm -rf "$VOL_DIR"
`;
// The helper pod needs root to create directories on the node: its namespace stays privileged,
// and only the provisioner can create pods there.
const helperPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'helper-pod' },
  spec: {
    priorityClassName: 'system-node-critical',
    tolerations: [{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }],
    containers: [
      { name: 'helper-pod', image: clusterImages.localPathProvisioner, imagePullPolicy: 'IfNotPresent' },
    ],
  },
};

/** The Kubernetes objects that run the provisioner and make its class the default (a `List`). */
export function localPathObjects(): object {
  const meta = { name, namespace, labels };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta,
        rules: [
          {
            apiGroups: [''],
            resources: ['pods'],
            verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
          },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name, labels },
        rules: [
          {
            apiGroups: [''],
            resources: ['nodes', 'persistentvolumeclaims', 'configmaps', 'pods', 'pods/log'],
            verbs: ['get', 'list', 'watch'],
          },
          {
            apiGroups: [''],
            resources: ['persistentvolumes'],
            verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
          },
          { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
          { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'local-path-config', namespace, labels },
        data: {
          'config.json': JSON.stringify({
            nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [paths.localVolumes] }],
          }),
          setup,
          teardown,
          'helperPod.yaml': JSON.stringify(helperPod),
        },
      },
      addonDeployment({
        name,
        namespace,
        labels,
        serviceAccountName: name,
        container: {
          name,
          image: clusterImages.localPathProvisioner,
          args: ['start', '--config', '/etc/config/config.json'],
          env: [
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'CONFIG_MOUNT_PATH', value: '/etc/config/' },
            // The helper pods run as this account too (the provisioner's default name is another).
            { name: 'SERVICE_ACCOUNT_NAME', value: name },
          ],
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
        },
        config: { configMap: 'local-path-config', mountPath: '/etc/config/' },
      }),
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: {
          name: defaultStorageClass,
          labels,
          annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        },
        provisioner: 'rancher.io/local-path',
        // Bound where the pod is scheduled: the volume is a directory on that node.
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    ],
  };
}

// The monitoring addon (ADR 0016): the Prometheus Operator and one Prometheus it runs, both built
// here from the Go module proxy, so that the charts' ServiceMonitors and PrometheusRules are
// scraped and evaluated for real. Optional: only the monitoring suite installs it, and removes it
// afterwards. Its Prometheus selects every ServiceMonitor and PrometheusRule in the cluster, and
// scrapes and evaluates every 5 s so that a test sees a target or an alert change in seconds.
import { monitoringImages } from '../images/image-names.ts';
import { oneReplicaDeployment } from './one-replica-deployment.ts';

/** The addon's namespace. */
export const monitoringNamespace = 'homeostat-monitoring';
/** The Prometheus custom resource's name; the operator names its pod `prometheus-<name>-0`. */
export const prometheusName = 'homeostat';
/** The Prometheus pod's name (the operator's StatefulSet of one replica). */
export const prometheusPod = `prometheus-${prometheusName}-0`;
/** Prometheus's HTTP port in that pod. */
export const prometheusPort = 9090;
/** How often the Prometheus scrapes (where a ServiceMonitor names no interval) and evaluates rules. */
export const prometheusInterval = '5s';

const operatorName = 'prometheus-operator';
const prometheusAccount = 'prometheus';
const labels = { 'app.kubernetes.io/part-of': 'homeostat-monitoring' };
const unprivileged = 65534;
const read = ['get', 'list', 'watch'];

// What the operator reads and writes: its own resources, the StatefulSet and the Secrets and
// ConfigMaps it generates for each Prometheus, the governing Service, and the namespaces it
// selects monitors in.
const operatorRules = [
  { apiGroups: ['monitoring.coreos.com'], resources: ['*'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] },
  { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'delete'] },
  {
    apiGroups: [''],
    resources: ['services', 'services/finalizers', 'endpoints'],
    verbs: ['get', 'create', 'update', 'delete'],
  },
  { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
  { apiGroups: [''], resources: ['namespaces'], verbs: read },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: read },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
];

// What Prometheus reads to find its targets (Kubernetes service discovery) and scrape them.
const prometheusRules = [
  { apiGroups: [''], resources: ['nodes', 'nodes/metrics', 'services', 'endpoints', 'pods'], verbs: read },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: read },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: read },
  { nonResourceURLs: ['/metrics'], verbs: ['get'] },
];

/** A ServiceAccount with a ClusterRole of `rules` bound to it. */
function accountWithClusterRole(name: string, rules: readonly object[]): object[] {
  const meta = { name, labels };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { ...meta, namespace: monitoringNamespace } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: monitoringNamespace }],
    },
  ];
}

/** The cluster-scoped objects the addon makes (for its removal): kind and name. */
export const clusterScopedObjects: readonly { kind: string; name: string }[] = [
  operatorName,
  prometheusAccount,
].flatMap((name) => [
  { kind: 'clusterrole', name },
  { kind: 'clusterrolebinding', name },
]);

/** The addon's objects for a server-side apply, once the Prometheus Operator's CRDs are established. */
export function prometheusAddonObjects(): object[] {
  const podSecurity = {
    runAsNonRoot: true,
    runAsUser: unprivileged,
    runAsGroup: unprivileged,
    seccompProfile: { type: 'RuntimeDefault' },
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: monitoringNamespace, labels } },
    ...accountWithClusterRole(operatorName, operatorRules),
    ...accountWithClusterRole(prometheusAccount, prometheusRules),
    oneReplicaDeployment({
      name: operatorName,
      namespace: monitoringNamespace,
      labels: { ...labels, 'app.kubernetes.io/name': operatorName },
      podSpec: {
        serviceAccountName: operatorName,
        securityContext: podSecurity,
        containers: [
          {
            name: operatorName,
            image: monitoringImages.prometheusOperator,
            imagePullPolicy: 'IfNotPresent',
            // The reloader runs beside every Prometheus: it writes out the configuration the
            // operator keeps gzipped in a Secret and tells Prometheus to reload it.
            args: [`--prometheus-config-reloader=${monitoringImages.prometheusConfigReloader}`],
            ports: [{ name: 'http', containerPort: 8080 }],
            resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '256Mi' } },
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
            },
          },
        ],
      },
    }),
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'Prometheus',
      metadata: { name: prometheusName, namespace: monitoringNamespace, labels },
      spec: {
        image: monitoringImages.prometheus,
        // The operator picks the flags it passes by this version: the image's tag.
        version: monitoringImages.prometheus.slice(monitoringImages.prometheus.lastIndexOf(':') + 1),
        imagePullPolicy: 'IfNotPresent',
        replicas: 1,
        serviceAccountName: prometheusAccount,
        securityContext: { ...podSecurity, fsGroup: unprivileged },
        scrapeInterval: prometheusInterval,
        evaluationInterval: prometheusInterval,
        // Empty selectors: every ServiceMonitor and PrometheusRule, in every namespace.
        serviceMonitorSelector: {},
        serviceMonitorNamespaceSelector: {},
        ruleSelector: {},
        ruleNamespaceSelector: {},
        retention: '2h',
        resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '1Gi' } },
      },
    },
  ];
}

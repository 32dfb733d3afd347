// CoreDNS as the cluster DNS: the objects kubeadm would create, trimmed to what a test cluster
// needs. It answers for cluster.local and the reverse zones only and forwards nothing, so no
// lookup made inside the cluster ever leaves this machine. Like kubeadm's (and so kind's), it
// caches nothing under the cluster domain: a cached "no such name" would outlive a pod that
// appears a moment later for up to 30 s, and an etcd leader looks a joining member's name up
// before the member's pod exists (every member join then waited for the negative cache to expire).
import { addonDeployment } from './addon-deployment.ts';
import { network } from './layout.ts';
import { clusterImages } from '../images/image-names.ts';

const labels = { 'k8s-app': 'kube-dns' };
// An unprivileged port inside the pod: the Service maps 53 to it, so CoreDNS needs no capability.
const dnsPort = 1053;

const corefile = `.:${dnsPort} {
    errors
    health :8080
    ready :8181
    kubernetes ${network.clusterDomain} in-addr.arpa ip6.arpa {
        pods insecure
        ttl 30
    }
    cache 30 {
        disable success ${network.clusterDomain}
        disable denial ${network.clusterDomain}
    }
    reload
}
`;

/** The Kubernetes objects that run CoreDNS at the cluster DNS address (a `List` for kubectl apply). */
export function coreDnsObjects(): object {
  const meta = (name: string) => ({ name, namespace: 'kube-system', labels });
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('coredns') },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'system:coredns', labels },
        rules: [
          {
            apiGroups: [''],
            resources: ['endpoints', 'services', 'pods', 'namespaces'],
            verbs: ['list', 'watch'],
          },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'system:coredns', labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
        subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('coredns'), data: { Corefile: corefile } },
      addonDeployment({
        name: 'coredns',
        namespace: 'kube-system',
        labels,
        serviceAccountName: 'coredns',
        podSpec: { dnsPolicy: 'Default' },
        container: {
          name: 'coredns',
          image: clusterImages.coredns,
          args: ['-conf', '/etc/coredns/Corefile'],
          ports: [
            { name: 'dns', containerPort: dnsPort, protocol: 'UDP' },
            { name: 'dns-tcp', containerPort: dnsPort, protocol: 'TCP' },
          ],
          readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
          livenessProbe: { httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 10 },
          resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '128Mi' } },
        },
        config: { configMap: 'coredns', mountPath: '/etc/coredns' },
      }),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { ...meta('kube-dns'), labels: { ...labels, 'kubernetes.io/name': 'CoreDNS' } },
        spec: {
          selector: labels,
          clusterIP: network.dnsServiceIp,
          ports: [
            { name: 'dns', port: 53, targetPort: dnsPort, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, targetPort: dnsPort, protocol: 'TCP' },
          ],
        },
      },
    ],
  };
}

// The chart's CRDs, ServiceAccount and RBAC (rendered by the real helm) installed into a real
// kube-apiserver, and credentials of that ServiceAccount: an operator run with them proves the
// chart's least-privilege rules are enough for everything it does.
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { installCrds, waitUntil } from '@homeostat/testing';
import { builtin, KubeClient, objectPath, resourceType, type KubeObject } from '@homeostat/reconcile';
import type { OperatorChart } from '../chart/operator-chart.ts';
import { helmTemplate, renderedObjects } from './helm-chart.ts';

const rbac = 'rbac.authorization.k8s.io/v1';
const accessKinds: Record<string, ReturnType<typeof resourceType>> = {
  ServiceAccount: builtin.serviceAccounts,
  ClusterRole: resourceType(rbac, 'ClusterRole', 'clusterroles', false),
  ClusterRoleBinding: resourceType(rbac, 'ClusterRoleBinding', 'clusterrolebindings', false),
  Role: resourceType(rbac, 'Role', 'roles'),
  RoleBinding: resourceType(rbac, 'RoleBinding', 'rolebindings'),
};

export interface ChartAccess {
  /** Credentials of the chart's ServiceAccount (a TokenRequest token, valid for an hour). */
  kubeConfig: KubeConfig;
  /** The Lease the chart's leader-election Role allows, "<release>-<chart>". */
  leaseName: string;
}

/**
 * Renders `chart` as release `release` in `namespace` (created here) with `helm template` and
 * default values (or `helmArgs`), installs its CRDs as rendered and applies its ServiceAccount and RBAC, then
 * returns credentials of that ServiceAccount. `admin` is a cluster-admin kubeconfig.
 */
export async function installChartAccess(
  chart: OperatorChart,
  admin: KubeConfig,
  release: string,
  namespace: string,
  /** More `helm template` arguments (`--set-json watchNamespaces=[...]`); a watched namespace must exist first. */
  helmArgs: readonly string[] = [],
): Promise<ChartAccess> {
  const rendered = helmTemplate(chart, release, namespace, helmArgs);
  if (rendered.status !== 0) throw new Error(`helm template ${chart.name} failed: ${rendered.stderr}`);
  const docs = renderedObjects(rendered.stdout) as KubeObject[];
  const client = new KubeClient(admin, { fieldManager: 'chart-access' });
  try {
    // The chart's own CRDs, not the in-memory ones: they must install as rendered.
    await installCrds(
      admin,
      docs.filter((d): d is KubeObject & KubernetesObject => d.kind === 'CustomResourceDefinition'),
    );
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    for (const doc of docs) {
      const type = accessKinds[doc.kind ?? ''];
      if (type) await client.apply(type, doc);
    }
    const serviceAccount = docs.find((d) => d.kind === 'ServiceAccount')?.metadata?.name ?? '';
    const tokenRequest = await client.transport.json<{ status: { token: string } }>({
      method: 'POST',
      path: objectPath(builtin.serviceAccounts, serviceAccount, namespace, 'token'),
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    });
    await waitForBindings(client, docs, `system:serviceaccount:${namespace}:${serviceAccount}`, namespace);
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'operator', token: tokenRequest.status.token }],
      contexts: [{ name: 'operator', cluster: cluster.name, user: 'operator' }],
      currentContext: 'operator',
    });
    return { kubeConfig, leaseName: `${release}-${chart.name}` };
  } finally {
    client.close();
  }
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}
type RbacObject = KubeObject & {
  rules?: PolicyRule[];
  roleRef?: { kind: string; name: string };
};

// New bindings take effect once the API server's authorizer has seen them, which on a loaded
// machine is not at once: wait until each binding grants the ServiceAccount its role's first rule,
// so an operator started next is never refused by a binding still on its way.
async function waitForBindings(client: KubeClient, docs: KubeObject[], user: string, namespace: string) {
  const objects = docs as RbacObject[];
  const checks = objects
    .filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding')
    .flatMap((binding) => {
      const role = objects.find(
        (d) => d.kind === binding.roleRef?.kind && d.metadata?.name === binding.roleRef?.name,
      );
      const rule = role?.rules?.[0];
      const [resource = '', subresource] = (rule?.resources?.[0] ?? '').split('/');
      if (!rule?.verbs?.[0] || !resource) return [];
      return [
        {
          namespace: binding.kind === 'RoleBinding' ? (binding.metadata?.namespace ?? namespace) : namespace,
          verb: rule.verbs[0],
          group: rule.apiGroups?.[0] ?? '',
          resource,
          ...(subresource ? { subresource } : {}),
          ...(rule.resourceNames?.[0] ? { name: rule.resourceNames[0] } : {}),
        },
      ];
    });
  const [, saNamespace = namespace] = user.split(':').slice(1);
  await waitUntil(
    'the chart RBAC in effect for its ServiceAccount',
    async () => {
      for (const resourceAttributes of checks) {
        const review = await client.transport.json<{ status?: { allowed?: boolean } }>({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user,
              groups: [
                'system:serviceaccounts',
                `system:serviceaccounts:${saNamespace}`,
                'system:authenticated',
              ],
              resourceAttributes,
            },
          },
        });
        if (!review.status?.allowed) return false;
      }
      return true;
    },
    { timeoutMs: 30_000 },
  );
}

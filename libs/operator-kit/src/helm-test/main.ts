// The program a chart's `helm test` pod runs, from the operator's own image (/app/helm-test.mjs):
// the chart's test template passes the plan in the environment; exit 0 when the operator answered
// and reconciled, 1 with the step that failed otherwise, 2 on a plan it cannot read.
import { KubeClient, loadKubeConfig, resourceType } from '@homeostat/reconcile';
import { runHelmTest, type HelmTestPlan, type ReconciledObject } from './helm-test.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new PlanError(`${name} is not set`);
  return value;
}

class PlanError extends Error {}

function readPlan(): HelmTestPlan {
  const resource = JSON.parse(required('TEST_RESOURCE')) as ReconciledObject;
  const apiVersion = resource.apiVersion;
  const kind = resource.kind;
  if (!apiVersion || !kind) throw new PlanError('TEST_RESOURCE needs apiVersion and kind');
  return {
    metricsUrl: required('METRICS_URL'),
    type: resourceType<ReconciledObject>(apiVersion, kind, required('TEST_PLURAL')),
    resource: {
      ...resource,
      metadata: { name: required('TEST_NAME'), namespace: required('TEST_NAMESPACE') },
    },
  };
}

let plan: HelmTestPlan;
try {
  plan = readPlan();
} catch (error) {
  console.error(`helm test: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
const client = new KubeClient(await loadKubeConfig(), { fieldManager: 'homeostat-helm-test' });
try {
  await runHelmTest(client, plan, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write('passed\n');
} catch (error) {
  console.error(`failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  client.close();
}

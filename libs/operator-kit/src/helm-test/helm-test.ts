// What `helm test <release>` proves about an installed operator: that it answers (its metrics,
// through the chart's Service, list its controllers' workers) and that it reconciles (a small
// custom resource it is given gets its first status from the operator); then it deletes that
// resource and waits until it is gone, so a test leaves nothing behind, passed or failed.
import http from 'node:http';
import { isNotFound, type KubeClient, type KubeObject, type ResourceType } from '@homeostat/reconcile';

/** A custom resource with the status every Homeostat kind reports. */
export interface ReconciledObject extends KubeObject {
  spec?: unknown;
  status?: {
    observedGeneration?: number;
    phase?: string;
    conditions?: readonly { type: string; status: string; reason?: string }[];
  };
}

export interface HelmTestPlan {
  /** The operator's metrics, through the chart's metrics Service. */
  metricsUrl: string;
  /** The kind of `resource`. */
  type: ResourceType<ReconciledObject>;
  /** What is created to be reconciled: name and namespace set. */
  resource: ReconciledObject & { metadata: { name: string; namespace: string } };
  /** How long each step may take, in ms. */
  timeouts?: { metrics?: number; reconcile?: number; cleanup?: number };
}

// Every operator's manager exports this series once its controllers run (libs/reconcile).
const controllerMetric = 'controller_runtime_active_workers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The body of a GET, or why there is none. */
export function getText(url: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        response.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${response.statusCode}`)),
      );
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

/** Polls `check` every second until it gives a value; at `timeoutMs` throws with the last reason. */
async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let reason = 'not checked';
  for (;;) {
    try {
      const result = await check();
      if (typeof result !== 'string') return result;
      reason = result;
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) throw new Error(`${what}: not after ${timeoutMs / 1000} s (${reason})`);
    await sleep(1000);
  }
}

function describeStatus(status: ReconciledObject['status']): string {
  const conditions = (status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(', ');
  return `phase ${status?.phase ?? 'none'}${conditions ? `, ${conditions}` : ''}`;
}

async function deleteAndWait(client: KubeClient, plan: HelmTestPlan, timeoutMs: number): Promise<void> {
  const { name, namespace } = plan.resource.metadata;
  // Background: what the resource owns is collected after it; the test waits for the resource alone.
  await client.delete(plan.type, name, namespace, { propagationPolicy: 'Background' });
  await eventually(`${plan.type.kind} ${namespace}/${name} gone`, timeoutMs, async () =>
    (await client.find(plan.type, name, namespace)) ? 'still there' : true,
  );
}

/** Runs the test; `log` gets one line per step passed. Throws with the step that failed. */
export async function runHelmTest(
  client: KubeClient,
  plan: HelmTestPlan,
  log: (line: string) => void,
  fetchText: (url: string) => Promise<string> = getText,
): Promise<void> {
  const timeouts = { metrics: 60_000, reconcile: 120_000, cleanup: 120_000, ...plan.timeouts };
  const { name, namespace } = plan.resource.metadata;
  const subject = `${plan.type.kind} ${namespace}/${name}`;

  await eventually(
    `the operator's metrics at ${plan.metricsUrl} listing its controllers`,
    timeouts.metrics,
    async () =>
      (await fetchText(plan.metricsUrl)).includes(controllerMetric) ? true : `no ${controllerMetric} series`,
  );
  log(`the operator answers: ${plan.metricsUrl} lists its controllers`);

  // A run killed before its cleanup left its resource: start from none.
  await deleteAndWait(client, plan, timeouts.cleanup);
  const created = await client.create(plan.type, {
    ...plan.resource,
    apiVersion: plan.type.apiVersion,
    kind: plan.type.kind,
  });
  try {
    const generation = created.metadata?.generation ?? 1;
    const reconciled = await eventually(
      `a status on ${subject} from the operator`,
      timeouts.reconcile,
      async () => {
        const current = await client.get(plan.type, name, namespace);
        const observed = current.status?.observedGeneration;
        return observed !== undefined && observed >= generation
          ? current
          : `status.observedGeneration ${observed ?? 'unset'}, generation ${generation}`;
      },
    );
    log(`the operator reconciles: ${subject} observed (${describeStatus(reconciled.status)})`);
  } finally {
    await deleteAndWait(client, plan, timeouts.cleanup).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
  log(`${subject} deleted`);
}

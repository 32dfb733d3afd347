// The two implementations of the Widget operator the benchmark compares, each started the same
// way: its own process (so its memory is its own), one namespace, the same number of workers,
// /metrics on a loopback port. Both expose controller-runtime's metric names, so the driver reads
// readiness and reconcile counts from both alike.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freeLoopbackPort,
  httpGet,
  logTail,
  sourceKeyedBinaryPath,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';
import { bundleOperator, operatorNodeFlags } from '@homeostat/operator-kit/bundle';
import { parseSamples, sumOf } from './prometheus-text.ts';

export const implementations = ['typescript', 'controller-runtime'] as const;
export type Implementation = (typeof implementations)[number];

export interface OperatorOptions {
  kubeconfigPath: string;
  namespace: string;
  workers: number;
  /** Where the operator's log goes. */
  logDir: string;
  /** Node flags of the TypeScript operator; default: the images' (operatorNodeFlags). */
  nodeFlags?: readonly string[];
  /** More flags of the controller-runtime operator, e.g. --json. */
  controllerRuntimeFlags?: readonly string[];
}

export interface RunningOperator {
  implementation: Implementation;
  process: ManagedProcess;
  metricsUrl: string;
}

/** Where tools/build-binaries.sh puts the controller-runtime operator (keyed by its sources). */
export function controllerRuntimeBinary(): string {
  return sourceKeyedBinaryPath('bench-widget-operator');
}

// The controller's name in both implementations: its metrics carry it as the `controller` label.
const controllerName = 'widget';

/** Starts one implementation and resolves once its Widget controller runs. */
export async function startOperator(
  implementation: Implementation,
  options: OperatorOptions,
): Promise<RunningOperator> {
  const port = await freeLoopbackPort();
  const logFile = join(options.logDir, `${implementation}-operator.log`);
  // The TypeScript operator runs as its image runs it: one esbuild bundle on plain Node, not the
  // .ts sources (Node's type stripping alone holds about 20 MB).
  const bundle = join(options.logDir, 'widget-operator.mjs');
  if (implementation === 'typescript') {
    await bundleOperator(fileURLToPath(new URL('./operator-process.ts', import.meta.url)), bundle);
  }
  const child =
    implementation === 'typescript'
      ? startProcess({
          name: 'typescript operator',
          command: process.execPath,
          args: [
            ...(options.nodeFlags ?? operatorNodeFlags),
            bundle,
            `--kubeconfig=${options.kubeconfigPath}`,
            `--namespace=${options.namespace}`,
            `--workers=${options.workers}`,
            `--metrics-port=${port}`,
          ],
          logFile,
        })
      : startProcess({
          name: 'controller-runtime operator',
          command: controllerRuntimeBinary(),
          args: [
            `--namespace=${options.namespace}`,
            `--workers=${options.workers}`,
            `--metrics-bind-address=127.0.0.1:${port}`,
            ...(options.controllerRuntimeFlags ?? []),
          ],
          logFile,
          env: { ...process.env, KUBECONFIG: options.kubeconfigPath },
        });
  const operator: RunningOperator = {
    implementation,
    process: child,
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
  };
  try {
    await waitUntil(
      `the ${implementation} operator's Widget controller`,
      async () => {
        const samples = await scrape(operator).catch(() => []);
        return sumOf(samples, 'controller_runtime_max_concurrent_reconciles', isWidget) === options.workers;
      },
      {
        timeoutMs: 60_000,
        abort: child.exited.then((code) => `the ${implementation} operator exited (${code}); its log ends:`),
        describe: () => logTail(logFile),
      },
    );
  } catch (error) {
    await child.stop();
    throw error;
  }
  return operator;
}

/** Reconciles the operator's Widget controller has finished, whatever their result. */
export async function reconcilesOf(operator: RunningOperator): Promise<number> {
  return sumOf(await scrape(operator), 'controller_runtime_reconcile_total', isWidget);
}

/** Mean seconds one reconcile of the Widget controller took, from its reconcile-time histogram. */
export async function meanReconcileSecondsOf(operator: RunningOperator): Promise<number> {
  const samples = await scrape(operator);
  const count = sumOf(samples, 'controller_runtime_reconcile_time_seconds_count', isWidget);
  return count ? sumOf(samples, 'controller_runtime_reconcile_time_seconds_sum', isWidget) / count : 0;
}

async function scrape(operator: RunningOperator) {
  const { status, body } = await httpGet(operator.metricsUrl, undefined, 5000);
  if (status !== 200) throw new Error(`GET ${operator.metricsUrl}: ${status}`);
  return parseSamples(body);
}

const isWidget = (labels: Record<string, string>) => labels['controller'] === controllerName;

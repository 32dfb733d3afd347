// The body of every operator's main.ts: read the configuration, log as JSON, load credentials,
// build the manager, stop gracefully on SIGTERM/SIGINT, and exit 2 on a configuration error.
import { existsSync, readFileSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import { KubeConfigError, loadKubeConfig, type ClusterSource, type Manager } from '@homeostat/reconcile';
import { ConfigError } from '../config/config-error.ts';
import type { CommonOperatorConfig, ConfigReader } from '../config/operator-config.ts';

// Kubernetes mounts the pod's namespace here; the last fallback for the Lease namespace.
const namespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface OperatorEntryPoint<C extends CommonOperatorConfig> {
  /** The operator's name: the logger's name and the prefix of configuration errors. */
  name: string;
  readConfig: ConfigReader<C>;
  /** Builds (does not start) the operator: `operatorManager` plus its controllers. */
  build: (kubeConfig: ClusterSource, config: C, extras: { logger: Logger }) => Manager;
  /** The operator's own settings worth a field in the "starting" log line (never a secret). */
  describe?: (config: C) => Record<string, unknown>;
}

/** Runs an operator process until SIGTERM; a configuration or kubeconfig error prints its message and exits 2. */
export async function runOperator<C extends CommonOperatorConfig>(
  entry: OperatorEntryPoint<C>,
): Promise<void> {
  try {
    const config = entry.readConfig(
      process.argv.slice(2),
      process.env,
      existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined,
    );
    const logger = pino({ name: entry.name, level: config.logLevel });
    // $KUBECONFIG, ~/.kube/config, or the pod's service account; without @kubernetes/client-node
    // at run time (its import alone costs an operator about 20 MB bundled, 100 MB unbundled).
    const manager = entry.build(await loadKubeConfig(), config, { logger });
    // Once the manager has stopped (a signal, lost leadership), the process ends, as a Go
    // operator's main returns: a handle an operand's client still holds (a gRPC channel, a
    // keep-alive socket) must not keep a stopped operator alive until the kubelet kills it.
    manager.whenStopped((error) => process.exit(error === undefined ? (process.exitCode ?? 0) : 1));
    manager.stopOnSignals();
    logger.info(
      {
        watchNamespaces: config.watchNamespaces.length ? config.watchNamespaces : 'all',
        leaderElection: config.leaderElection ?? 'off',
        ...entry.describe?.(config),
      },
      'starting',
    );
    await manager.start();
  } catch (error) {
    if (error instanceof ConfigError || error instanceof KubeConfigError) {
      console.error(`${entry.name}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

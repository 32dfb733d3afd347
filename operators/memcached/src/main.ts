// The operator's entry point: read the configuration, build the manager, run until SIGTERM.
import { existsSync, readFileSync } from 'node:fs';
import { KubeConfigError, loadKubeConfig } from '@homeostat/reconcile';
import { pino } from 'pino';
import { ConfigError, readConfig } from './config/operator-config.ts';
import { memcachedOperator } from './operator.ts';
import { operatorName } from './controllers/operand-labels.ts';

const namespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

try {
  const config = readConfig(
    process.argv.slice(2),
    process.env,
    existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined,
  );
  const logger = pino({ name: operatorName, level: config.logLevel });
  // $KUBECONFIG, ~/.kube/config, or the pod's service account; without @kubernetes/client-node
  // at run time (its import alone costs about 100 MB of memory).
  const manager = memcachedOperator(await loadKubeConfig(), config, { logger });
  manager.stopOnSignals();
  logger.info(
    {
      watchNamespaces: config.watchNamespaces.length ? config.watchNamespaces : 'all',
      leaderElection: config.leaderElection ?? 'off',
      memcachedImage: config.memcachedImage,
    },
    'starting',
  );
  await manager.start();
} catch (error) {
  if (error instanceof ConfigError || error instanceof KubeConfigError) {
    console.error(`memcached-operator: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

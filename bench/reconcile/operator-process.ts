// The benchmark's operator, in its own process so its memory is measured alone. It runs the
// Widget operator from libs/reconcile's test support (one owned ConfigMap and a status write per
// Widget) and answers the parent's `stats` messages over the IPC channel.
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { widgetOperator } from '../../libs/reconcile/src/test-support/widget-operator.ts';

const [kubeconfigPath, namespace] = process.argv.slice(2);
if (!kubeconfigPath || !namespace) throw new Error('usage: operator-process <kubeconfig> <namespace>');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
const manager = widgetOperator(
  kubeConfig,
  { logger: pino({ level: 'warn' }), namespaces: [namespace], maxConcurrentReconciles: 4 },
  { finalizer: false },
);
await manager.start();

process.on('message', (message: unknown) => {
  if (message !== 'stats') return;
  const counts = manager.client.transport.counts;
  const writes = ['POST', 'PUT', 'PATCH', 'DELETE'].reduce((sum, verb) => sum + (counts[verb] ?? 0), 0);
  void manager.metrics.registry
    .getSingleMetric('controller_runtime_reconcile_total')
    ?.get()
    .then((metric) => {
      const reconciles = metric.values.reduce((sum, v) => sum + v.value, 0);
      process.send?.({ writes, reconciles, rssBytes: process.memoryUsage().rss });
    });
});
process.on('SIGTERM', () => void manager.stop().then(() => process.exit(0)));
process.send?.('ready');

// The benchmark's TypeScript operator, in its own process so that its memory is measured alone:
// the Widget operator of libs/reconcile's test support (one owned ConfigMap, an Event and a status
// per Widget; no finalizer), watching one namespace and serving /metrics on loopback. This file is
// the one place the benchmark builds it.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { fromKubeconfigFiles } from '@homeostat/reconcile';
import { widgetOperator } from '../../libs/reconcile/src/test-support/widget-operator.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    workers: { type: 'string', default: '4' },
    'metrics-port': { type: 'string' },
  },
});
if (!values.kubeconfig || !values.namespace || !values['metrics-port']) {
  throw new Error(
    'usage: operator-process --kubeconfig=PATH --namespace=NS --metrics-port=PORT [--workers=N]',
  );
}

const manager = widgetOperator(
  await fromKubeconfigFiles([values.kubeconfig]),
  {
    logger: pino({ level: 'warn' }),
    namespaces: [values.namespace],
    maxConcurrentReconciles: Number(values.workers),
    metricsPort: Number(values['metrics-port']),
    bindAddress: '127.0.0.1',
  },
  { finalizer: false },
);
manager.stopOnSignals();
await manager.start();

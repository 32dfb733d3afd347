// npm run bench:reconcile -- [--objects N] [--kubeconfig PATH] [--idle-seconds S]
// Creates N Widgets on a real control plane (its own, or the cluster of --kubeconfig), runs the
// Widget operator as a separate process, and prints how fast it converges, its memory, and the
// writes it makes once converged (which must be 0). It prints figures; it asserts nothing.
import { fork, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { installCrds, startControlPlane, type ControlPlane } from '@homeostat/testing';
import { KubeClient, builtin } from '@homeostat/reconcile';
import { widgetCrd, widgets, type Widget } from '../../libs/reconcile/src/test-support/widget.ts';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '1000' },
    kubeconfig: { type: 'string' },
    'idle-seconds': { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '16' },
  },
});
const objects = Number(values.objects);
const idleSeconds = Number(values['idle-seconds']);
const say = (line: string) => console.error(`bench:reconcile ${line}`);

interface OperatorStats {
  writes: number;
  reconciles: number;
  rssBytes: number;
}

function askStats(child: ChildProcess): Promise<OperatorStats> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as OperatorStats));
    child.send('stats');
  });
}

let controlPlane: ControlPlane | undefined;
let kubeconfigPath = values.kubeconfig;
if (!kubeconfigPath) {
  const started = performance.now();
  controlPlane = await startControlPlane();
  kubeconfigPath = controlPlane.kubeconfigPath;
  say(
    `started a control plane (${controlPlane.version}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
const client = new KubeClient(kubeConfig, { fieldManager: 'bench' });
const namespace = `bench-reconcile-${Date.now()}`;
await installCrds(kubeConfig, [widgetCrd]);
await client.create(builtin.namespaces, { metadata: { name: namespace } });

const operator = fork(
  fileURLToPath(new URL('./operator-process.ts', import.meta.url)),
  [kubeconfigPath, namespace],
  {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  },
);
await new Promise<void>((resolve) => operator.once('message', () => resolve()));
say(`operator process ${operator.pid} ready; creating ${objects} Widgets in ${namespace}`);

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: Number(values.concurrency) }, async () => {
    while (next < objects) {
      const i = next++;
      await client.create(widgets, {
        metadata: { name: `w-${i}`, namespace },
        spec: { size: i % 50 },
      } as Widget);
    }
  }),
);
say(
  `created ${objects} Widgets in ${((performance.now() - started) / 1000).toFixed(1)} s; waiting for convergence`,
);

const converged = (w: Widget) =>
  w.status?.gizmos === w.spec.size && w.status.observedGeneration === w.metadata?.generation;
for (;;) {
  const { items } = await client.list(widgets, { namespace });
  const done = items.filter(converged).length;
  if (done === objects) break;
  say(`${done}/${objects} converged after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await new Promise((r) => setTimeout(r, 2000));
}
const secondsToConverge = (performance.now() - started) / 1000;
const atConvergence = await askStats(operator);
say(
  `converged in ${secondsToConverge.toFixed(1)} s after ${atConvergence.reconciles} reconciles and ${atConvergence.writes} writes`,
);

say(`idle for ${idleSeconds} s, counting the operator's writes`);
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const afterIdle = await askStats(operator);

operator.kill('SIGTERM');
await new Promise((r) => operator.once('exit', r));
await client.delete(builtin.namespaces, namespace);
client.close();
await controlPlane?.stop();

process.stdout.write(
  JSON.stringify({
    objects,
    seconds_to_converge: Number(secondsToConverge.toFixed(2)),
    reconciles_per_second: Number((atConvergence.reconciles / secondsToConverge).toFixed(1)),
    rss_mb: Number((afterIdle.rssBytes / 2 ** 20).toFixed(1)),
    idle_writes_per_minute: Number(
      (((afterIdle.writes - atConvergence.writes) * 60) / idleSeconds).toFixed(1),
    ),
  }) + '\n',
);

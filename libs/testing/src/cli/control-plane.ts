// `npm run control-plane`: a real etcd + kube-apiserver for people, in the foreground.
// Prints `KUBECONFIG=<path>` once ready and stops everything on SIGINT or SIGTERM.
import { startControlPlane } from '../control-plane.ts';

const started = Date.now();
const crds = process.argv.slice(2);
const controlPlane = await startControlPlane({ crds });
console.error(
  `control plane ${controlPlane.version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${controlPlane.server}` +
    ` (logs in ${controlPlane.workDir}); Ctrl-C stops it`,
);
process.stdout.write(`KUBECONFIG=${controlPlane.kubeconfigPath}\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: stopping kube-apiserver and etcd`);
    controlPlane.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('stopping the control plane failed:', error);
        process.exit(1);
      },
    );
  });
}
// Keep the event loop alive until a signal arrives (the server processes are unref'd).
setInterval(() => undefined, 1 << 30);

// Test helper process: runs a manager with leader election on the given kubeconfig and prints
// LEADING once it holds the lease. The leader-election test SIGKILLs it to play a crashed leader.
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Manager } from '../manager/manager.ts';

const [kubeconfigPath, namespace, leaseName, identity] = process.argv.slice(2);
if (!kubeconfigPath || !namespace || !leaseName || !identity)
  throw new Error('usage: leader-process <kubeconfig> <namespace> <lease> <identity>');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
const manager = new Manager({
  kubeConfig,
  name: 'leader-test',
  logger: pino({ level: 'warn' }),
  leaderElection: {
    namespace,
    leaseName,
    identity,
    leaseDurationMs: 4000,
    renewDeadlineMs: 3000,
    retryPeriodMs: 500,
  },
});
await manager.start();
await manager.elected;
process.stdout.write('LEADING\n');
setInterval(() => undefined, 1 << 30);

// The operator's entry point: the kit reads the configuration, builds the manager and runs it until SIGTERM.
// The same file (the image runs one bundle) is the agent of the pods the operator makes to restore
// a member or write a backup into a claim, when its first argument is an agent command (ADR 0302).
import { runOperator } from '@homeostat/operator-kit';
import { agentCommands, runAgent } from './backup/agent.ts';
import { messageOf } from './errors.ts';
import { readConfig } from './config/operator-config.ts';
import { operatorName } from './controllers/cluster-names.ts';
import { etcdOperator } from './operator.ts';

if (agentCommands.includes(process.argv[2] ?? '')) {
  try {
    await runAgent(process.argv.slice(2), process.env);
  } catch (error) {
    // The stack for whoever reads the log, then why in one line: the kubelet keeps the log's tail
    // as a failed container's message, and the operator reports that last line.
    console.error(error);
    console.error(`${process.argv[2] ?? ''} failed: ${messageOf(error)}`);
    process.exit(1);
  }
  process.exit(0);
}

await runOperator({
  name: operatorName,
  readConfig,
  build: etcdOperator,
  describe: (config) => ({
    etcdImageRepository: config.etcdImageRepository,
    clusterDomain: config.clusterDomain,
  }),
});

// The operator's entry point: the kit reads the configuration, builds the manager and runs it until SIGTERM.
// The same file (the image runs one bundle) is the restore agent of a member being restored from a
// backup when its first argument is one of the agent's commands (docs/adr/0302).
import { runOperator } from '@homeostat/operator-kit';
import { restoreAgentCommands, runRestoreAgent } from './backup/restore-agent.ts';
import { readConfig } from './config/operator-config.ts';
import { operatorName } from './controllers/cluster-names.ts';
import { etcdOperator } from './operator.ts';

if (restoreAgentCommands.includes(process.argv[2] ?? '')) {
  await runRestoreAgent(process.argv.slice(2), process.env);
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

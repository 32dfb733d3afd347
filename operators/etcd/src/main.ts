// The operator's entry point: the kit reads the configuration, builds the manager and runs it until SIGTERM.
import { runOperator } from '@homeostat/operator-kit';
import { readConfig } from './config/operator-config.ts';
import { operatorName } from './controllers/cluster-names.ts';
import { etcdOperator } from './operator.ts';

await runOperator({
  name: operatorName,
  readConfig,
  build: etcdOperator,
  describe: (config) => ({
    etcdImageRepository: config.etcdImageRepository,
    clusterDomain: config.clusterDomain,
  }),
});

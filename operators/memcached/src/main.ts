// The operator's entry point: the kit reads the configuration, builds the manager and runs it until SIGTERM.
import { runOperator } from '@homeostat/operator-kit';
import { readConfig } from './config/operator-config.ts';
import { memcachedOperator } from './operator.ts';
import { operatorName } from './controllers/operand-labels.ts';

await runOperator({
  name: operatorName,
  readConfig,
  build: memcachedOperator,
  describe: (config) => ({ memcachedImage: config.memcachedImage }),
});

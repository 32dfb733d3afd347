// The PostgreSQL operator's configuration: the settings every operator has (libs/operator-kit)
// plus the image of each supported PostgreSQL version and how often instances are probed.
import {
  defineOperatorConfig,
  text,
  wholeNumber,
  type OperatorConfig as ConfigOf,
} from '@homeostat/operator-kit';
import { operatorName } from '../controllers/operand-labels.ts';
import { defaultPostgresImages } from './default-images.ts';

const settings = {
  postgres17Image: {
    flag: 'postgres-17-image',
    env: 'POSTGRES_17_IMAGE',
    placeholder: 'ref',
    help: 'image of PostgreSQLClusters of postgresVersion 17 that name none',
    default: defaultPostgresImages[17],
    parse: text,
  },
  postgres18Image: {
    flag: 'postgres-18-image',
    env: 'POSTGRES_18_IMAGE',
    placeholder: 'ref',
    help: 'image of PostgreSQLClusters of postgresVersion 18 that name none',
    default: defaultPostgresImages[18],
    parse: text,
  },
  probeIntervalMs: {
    flag: 'probe-interval-ms',
    env: 'PROBE_INTERVAL_MS',
    placeholder: 'n',
    help: "how often each cluster's instances are probed over SQL, in milliseconds",
    default: '500',
    parse: wholeNumber(100),
  },
};

export type OperatorConfig = ConfigOf<typeof settings>;

/** `readConfig` reads flags, then environment variables, then defaults; `usage` lists them. */
export const { read: readConfig, usage } = defineOperatorConfig(operatorName, settings);

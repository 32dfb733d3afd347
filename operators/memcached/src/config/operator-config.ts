// The Memcached operator's configuration: the settings every operator has (libs/operator-kit)
// plus the images of Memcacheds (memcached and its metrics sidecar) that name none.
import { defineOperatorConfig, text, type OperatorConfig as ConfigOf } from '@homeostat/operator-kit';
import { defaultMemcachedExporterImage, defaultMemcachedImage } from './default-image.ts';
import { operatorName } from '../controllers/operand-labels.ts';

const settings = {
  memcachedImage: {
    flag: 'memcached-image',
    env: 'MEMCACHED_IMAGE',
    placeholder: 'ref',
    help: 'image of Memcacheds that name none',
    default: defaultMemcachedImage,
    parse: text,
  },
  memcachedExporterImage: {
    flag: 'memcached-exporter-image',
    env: 'MEMCACHED_EXPORTER_IMAGE',
    placeholder: 'ref',
    help: 'image of the metrics sidecar in every Memcached pod that names none',
    default: defaultMemcachedExporterImage,
    parse: text,
  },
};

export type OperatorConfig = ConfigOf<typeof settings>;

/** `readConfig` reads flags, then environment variables, then defaults; `usage` lists them. */
export const { read: readConfig, usage } = defineOperatorConfig(operatorName, settings);

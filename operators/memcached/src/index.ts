// @homeostat/memcached-operator: the Memcached API and the operator, for tests, e2e suites and tools.
export { memcachedCrd } from './api/memcached-crd.ts';
export {
  memcacheds,
  conditionTypes,
  type Memcached,
  type MemcachedSpecFields,
} from './api/memcached-types.ts';
export { memcachedOperator } from './operator.ts';
export { serverAddresses, type ServerSet } from './controllers/memcached-servers.ts';
export { readConfig, type OperatorConfig } from './config/operator-config.ts';
export { defaultMemcachedImage } from './config/default-image.ts';

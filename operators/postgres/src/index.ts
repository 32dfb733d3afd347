// What the package offers other code: the API of its custom resources (types, the client's kind
// descriptors, the condition types and the CRDs), as tools that read or write PostgreSQLClusters
// need them. The failover engine and the controllers are the operator's own and stay inside it.
export {
  conditionTypes,
  postgresClusters,
  type PostgresCluster,
  type PostgresClusterSpecFields,
  type PostgresClusterStatusFields,
} from './api/postgres-cluster-types.ts';
export {
  backupConditionTypes,
  postgresBackups,
  type PostgresBackup,
  type PostgresBackupSpecFields,
  type PostgresBackupStatusFields,
} from './api/postgres-backup-types.ts';
export { postgresClusterCrd } from './api/postgres-cluster-crd.ts';
export { postgresBackupCrd } from './api/postgres-backup-crd.ts';

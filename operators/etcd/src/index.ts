// @homeostat/etcd-operator: the EtcdCluster and EtcdBackup API, and the engine under the operator
// (membership, health, backup, restore and maintenance, over etcd3).
export { etcdClusterCrd } from './api/etcd-cluster-crd.ts';
export { etcdBackupCrd } from './api/etcd-backup-crd.ts';
export {
  etcdClusters,
  clusterConditionTypes,
  type EtcdCluster,
  type EtcdClusterSpecFields,
  type EtcdClusterStatusFields,
} from './api/etcd-cluster-types.ts';
export { etcdBackups, backupConditionTypes, type EtcdBackup } from './api/etcd-backup-types.ts';
export { etcdReleases, supportedVersions, defaultVersion, imageOf } from './api/etcd-versions.ts';
export { openClient, openMemberClient, withMemberClient, type EtcdConnection } from './connection.ts';
export { EtcdEngineError, isTransient, type EtcdEngineReason } from './errors.ts';
export { memberIdHex, isNoMember } from './member-id.ts';
export { listMembers, memberByPeerUrl, type EtcdMember } from './membership/members.ts';
export {
  checkAddLearner,
  checkPromote,
  checkRemove,
  learnerInSync,
  type RemoveOptions,
  type Verdict,
} from './membership/safety.ts';
export {
  addLearner,
  promoteLearner,
  removeMember,
  type AddLearnerResult,
} from './membership/membership-changes.ts';
export {
  convergeMembership,
  reconcileMembershipStep,
  replaceMember,
  type DesiredMember,
  type JoinSpec,
  type MemberRuntime,
  type ReconcileOptions,
  type StepOutcome,
} from './membership/membership-reconciler.ts';
export {
  readClusterHealth,
  quorumOf,
  type ClusterHealth,
  type ClusterState,
  type RaisedAlarm,
} from './health/cluster-health.ts';
export { readMemberStatus, type MemberHealth, type MemberStatus } from './health/member-status.ts';
export { compareHashKV, memberHashKV, type HashKVComparison } from './health/hash-kv.ts';
export { SnapshotTrailerVerifier, TRAILER_BYTES, type VerifiedSnapshot } from './backup/snapshot-trailer.ts';
export type { BackupRecord, SnapshotSink, SnapshotUpload } from './backup/snapshot-sink.ts';
export { fileSnapshotSink } from './backup/file-sink.ts';
export {
  chooseSnapshotSource,
  takeBackup,
  type BackupOptions,
  type BackupPhase,
} from './backup/take-backup.ts';
export { runEtcdutl, snapshotFileStatus, type SnapshotFileStatus } from './etcdutl.ts';
export { verifySnapshotFile } from './restore/verify-snapshot-file.ts';
export {
  planRestore,
  type RestoreMember,
  type RestorePlan,
  type RestoreRequest,
  type RestoreStep,
} from './restore/restore-plan.ts';
export { runRestore } from './restore/run-restore.ts';
export {
  defragmentMembers,
  type DefragmentOptions,
  type DefragmentResult,
} from './maintenance/defragment.ts';
export { recoverFromNoSpace, type NoSpaceRecovery } from './maintenance/nospace-recovery.ts';

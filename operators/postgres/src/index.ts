export {
  FailoverEngine,
  type FailoverEngineOptions,
  type EngineEvent,
  type EngineOutcome,
  type Promotion,
  type Refusal,
  type RefusalCode,
} from './engine.ts';
export type { Fencing, Routing, InstanceActions } from './actions.ts';
export {
  decide,
  defaultPolicy,
  type Action,
  type ActionFailure,
  type Decision,
  type DecideInput,
  type FailoverPolicy,
} from './decide.ts';
export { perform, type EngineWorld, type ActionResult } from './perform.ts';
export { runSteps, observeAll, type StepRun, type StepRunResult } from './drive.ts';
export {
  settledState,
  memoryStateStore,
  sameState,
  type FailoverState,
  type FailoverStateStore,
  type Operation,
  type OperationStep,
} from './failover-state.ts';
export {
  observeInstance,
  replicaPosition,
  type InstanceStatus,
  type PrimaryStatus,
  type ReplicaStatus,
  type UnreachableStatus,
} from './observe.ts';
export {
  chooseFailoverCandidate,
  compareCandidates,
  type CandidateChoice,
  type CandidateVerdict,
} from './candidate.ts';
export { desiredSynchronousStandbyNames, type SynchronousReplication } from './synchronous.ts';
export { slotName } from './control.ts';
export { parseLsn, formatLsn, type Lsn } from './lsn.ts';
export type { InstanceEndpoint, Credentials, ConnectOptions } from './instance.ts';
export { clusterView, type ClusterView, type InstanceView } from './cluster-view.ts';

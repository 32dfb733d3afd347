// What the engine needs from the world around the databases. The Kubernetes operator implements
// these with pod deletion, labels and Services; the tests implement them with real effects on the
// PostgreSQL processes they started. None of them may be a no-op that only pretends.
import type { InstanceEndpoint } from '../instance/instance.ts';

/** Makes sure an instance can no longer accept writes (kill it, isolate it, delete its pod). */
export interface Fencing {
  /** Resolves only once `instance` cannot accept a write; rejects when that cannot be ensured. */
  fence(instance: InstanceEndpoint): Promise<void>;
}

/** Where clients' writes go (the read-write Service). */
export interface Routing {
  /** Stops sending writes anywhere; existing write connections are cut. */
  withdrawWrites(from: InstanceEndpoint): Promise<void>;
  /** Sends writes to the new primary. */
  routeWritesTo(primary: InstanceEndpoint): Promise<void>;
}

/** Restarts and stops instances (pods) with the role the engine gives them. */
export interface InstanceActions {
  /** Shuts an instance down cleanly (fast shutdown) and resolves when it has stopped. */
  stopCleanly(instance: InstanceEndpoint): Promise<void>;
  /** (Re)starts an instance's entrypoint as a replica of `primary` (pg_rewind or re-clone). */
  rejoinAsReplica(instance: InstanceEndpoint, primary: InstanceEndpoint): Promise<void>;
}

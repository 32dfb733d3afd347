// The PostgreSQL roles the operator creates and uses itself. They live with the API because the
// CRD refuses them as bootstrap.owner: a bootstrap that creates one of them a second time fails.

/** The superuser initdb creates, which the operator connects as. */
export const operatorUser = 'homeostat';

/** The role the entrypoint creates for streaming replication (LOGIN REPLICATION, not superuser). */
export const replicationUser = 'streaming_replica';

/** The superuser published when `superuserAccess` is on. */
export const superuserName = 'postgres';

/** Every role name above, sorted: what bootstrap.owner may not be. */
export const operatorRoleNames: readonly string[] = [operatorUser, replicationUser, superuserName].sort();

// `superuserAccess`: the `postgres` role logs in with the published Secret's password while it is
// on, and cannot log in while it is off. Set on a settled, writable primary only, after the
// engine's turn has said which instance that is.
import type { V1Secret } from '@kubernetes/client-node';
import type { ReconcileContext } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { setSuperuserAccess } from '../instance/control.ts';
import type { InstanceAccess } from './instance-access.ts';
import { secretNames } from './cluster-names.ts';
import { secretText } from './cluster-tls.ts';
import { superuserName } from './desired-secrets.ts';
import type { FailoverRunResult } from './run-failover.ts';

export async function keepSuperuserAccess(
  cluster: PostgresCluster,
  run: FailoverRunResult,
  secrets: ReadonlyMap<string, V1Secret>,
  access: InstanceAccess,
  ctx: ReconcileContext,
): Promise<void> {
  const primary = run.state?.currentPrimary;
  if (!primary || run.state?.operation) return;
  const observed = run.view.instances.find((i) => i.status.name === primary)?.status;
  if (!observed?.reachable || observed.role !== 'primary') return;
  const secretName = secretNames(cluster.metadata?.name ?? '').superuser;
  let password: string | undefined;
  if (cluster.spec.superuserAccess) {
    password = secretText(secrets.get(secretName), 'password');
    if (password === undefined) return; // the Secret is not in the cache yet
  }
  try {
    const changed = await setSuperuserAccess(
      { endpoint: access.endpointOf(primary), credentials: access.credentials, options: access.connect },
      superuserName,
      password,
    );
    if (!changed) return;
    await ctx.events.normal(
      cluster,
      password === undefined ? 'SuperuserAccessRevoked' : 'SuperuserAccessGranted',
      'SuperuserAccess',
      password === undefined
        ? `${superuserName} can no longer log in`
        : `${superuserName} logs in with the password in Secret ${secretName}`,
    );
  } catch (error) {
    // The next reconcile tries again; the message names the instance and the step, never the password.
    ctx.log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'superuser access not applied yet',
    );
  }
}

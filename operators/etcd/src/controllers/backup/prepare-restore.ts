// What the cluster controller calls before it creates the first member of a new cluster: when the
// spec says bootstrap.fromBackup, the backup is found and verified, and the member's pod is given
// the init containers that restore it. Once that pod exists there is nothing to prepare again.
import type { V1Pod } from '@kubernetes/client-node';
import type { EventRecorder, KubeClient } from '@homeostat/reconcile';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { namespaceOf } from '../cluster-names.ts';
import type { DesiredMember } from '../../membership/membership-reconciler.ts';
import { verifyClaimBackup } from './claim-verify.ts';
import { restoreInitContainers, withRestore } from './restore-pod.ts';
import { restoreSourceOf, verifyRestoreSource, type RestoreSource } from './restore-source.ts';

export interface RestoreDeps {
  readonly cluster: EtcdCluster;
  readonly client: KubeClient;
  readonly events: EventRecorder;
  /** The operator's own image (runs the fetch and finish steps) and the members' etcd image. */
  readonly images: { readonly operator: string; readonly etcd: string };
}

/** What the first member's pod needs: the restore (a pod change), or to wait for the backup's check. */
export type PreparedRestore =
  { readonly kind: 'ready'; readonly decorate: (pod: V1Pod) => V1Pod } | { readonly kind: 'verifying' };

/**
 * The pod change that restores `first` from the cluster's backup (`from`, or bootstrap.fromBackup),
 * or undefined when the cluster is not restored from one. A backup in a bucket is read through its
 * checks here; one in a claim by a pod (claim-verify.ts), so that may take a few reconciles.
 * Throws RestoreRefusal when the backup cannot be used.
 */
export async function prepareRestore(
  deps: RestoreDeps,
  first: DesiredMember,
  from?: RestoreSource,
): Promise<PreparedRestore | undefined> {
  const source = from ?? (await restoreSourceOf(deps.cluster, deps.client));
  if (!source) return undefined;
  const verified = source.claim
    ? await verifyClaimBackup({
        cluster: deps.cluster,
        source: { ...source, claim: source.claim },
        image: deps.images.operator,
        client: deps.client,
      })
    : await verifyRestoreSource(source, namespaceOf(deps.cluster), deps.client);
  if (!verified) return { kind: 'verifying' };
  await deps.events.normal(
    deps.cluster,
    'RestoreStarted',
    'Restore',
    `restoring ${first.name} from ${source.describe}: ${verified.sizeBytes} bytes, sha256 ${verified.sha256} verified`,
  );
  const checked = { ...source, sha256: verified.sha256 };
  const init = restoreInitContainers(deps.cluster, first.name, first, checked, deps.images);
  return { kind: 'ready', decorate: (pod) => withRestore(pod, init, checked) };
}

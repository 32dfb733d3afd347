// The suites' own etcd client, run where the suite runs: through an EtcdCluster's client Service
// (its ClusterIP; the local cluster's node is this machine, `--cluster kind` routes the Service
// range here) over TLS with the client certificate the operator generated, as an application
// would. A write load records every acknowledged put, so lost writes are counted, never guessed.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Secret, V1Service } from '@kubernetes/client-node';
import { openClient } from '@homeostat/etcd-operator';
import type { Etcd3 } from 'etcd3';
import type { AcknowledgedWrite, AcknowledgedWrites } from './acknowledged-writes.ts';
import { getObject } from './cluster-access.ts';

const clientPort = 2379;

/** How a client outside the cluster's DNS reaches one EtcdCluster. */
export interface EtcdClientTarget {
  /** https://<ClusterIP>:2379 */
  readonly endpoint: string;
  /** The Service's DNS name, which the serving certificate names (the IP is not in it). */
  readonly serverName: string;
  readonly ca: Buffer;
  readonly certificate: Buffer;
  readonly privateKey: Buffer;
}

function secretBytes(secret: V1Secret | undefined, key: string): Buffer {
  const value = secret?.data?.[key];
  if (!value) throw new Error(`Secret ${secret?.metadata?.name ?? '?'} has no ${key}`);
  return Buffer.from(value, 'base64');
}

/** The client Service and the client TLS Secret the cluster's status names. */
export async function etcdClientTarget(namespace: string, cluster: string): Promise<EtcdClientTarget> {
  const object = await getObject<{ status?: { clientSecret?: string } }>('etcdcluster', cluster, namespace);
  const secretName = object?.status?.clientSecret;
  if (!secretName) throw new Error(`EtcdCluster ${namespace}/${cluster} names no client Secret yet`);
  const secret = await getObject<V1Secret>('secret', secretName, namespace);
  const service = await getObject<V1Service>('service', cluster, namespace);
  const ip = service?.spec?.clusterIP;
  if (!ip) throw new Error(`Service ${namespace}/${cluster} has no ClusterIP`);
  return {
    endpoint: `https://${ip}:${clientPort}`,
    serverName: `${cluster}.${namespace}.svc`,
    ca: secretBytes(secret, 'ca.crt'),
    certificate: secretBytes(secret, 'tls.crt'),
    privateKey: secretBytes(secret, 'tls.key'),
  };
}

/** A client of `target` whose every call gives up after `callTimeoutMs` and is never retried blindly. */
export function openEtcdClient(target: EtcdClientTarget, callTimeoutMs = 2000): Etcd3 {
  return openClient({
    endpoints: [target.endpoint],
    callTimeoutMs,
    credentials: {
      rootCertificate: target.ca,
      certChain: target.certificate,
      privateKey: target.privateKey,
    },
    grpcOptions: { 'grpc.ssl_target_name_override': target.serverName },
  });
}

export interface EtcdWriteLoad extends AcknowledgedWrites {
  /** Stops writing; resolves when the writer loop has ended. */
  stop(): Promise<void>;
}

/** The key of write `id`: zero-padded, so a prefix range reads them in order. */
export const ackedKey = (prefix: string, id: number): string => `${prefix}${String(id).padStart(10, '0')}`;

/**
 * Puts `<prefix><id>` = id with increasing ids through `target`, one at a time with `pauseMs`
 * between acknowledged puts, until stopped. A put that fails or times out (2 s) is recorded as a
 * failure and its id never reused; the client is opened again after a failure.
 */
export function startEtcdWriteLoad(target: EtcdClientTarget, prefix: string, pauseMs = 10): EtcdWriteLoad {
  const acked: AcknowledgedWrite[] = [];
  const failures: number[] = [];
  let stopping = false;
  let client: Etcd3 | undefined;
  let nextId = 1;
  const loop = (async () => {
    while (!stopping) {
      const id = nextId++;
      try {
        client ??= openEtcdClient(target);
        await client.put(ackedKey(prefix, id)).value(String(id)).exec();
        acked.push({ id, at: Date.now() });
        if (pauseMs) await sleep(pauseMs);
      } catch {
        failures.push(Date.now());
        client?.close();
        client = undefined;
        await sleep(50);
      }
    }
    client?.close();
  })();
  return {
    acked,
    failures,
    async stop() {
      stopping = true;
      await loop;
    },
  };
}

/** The ids under `prefix` the cluster holds, by a linearizable read (retried for up to a minute). */
export async function presentIds(target: EtcdClientTarget, prefix: string): Promise<Set<number>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = openEtcdClient(target, 20_000);
    try {
      const values = await client.getAll().prefix(prefix).strings();
      return new Set(Object.values(values).map(Number));
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(1000);
    } finally {
      client.close();
    }
  }
}

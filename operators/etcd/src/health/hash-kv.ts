import type { Etcd3, IHashKVResponse } from 'etcd3';
import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { askAnyEndpoint } from './cluster-health.ts';

interface Callable {
  exec(service: string, method: string, payload: unknown): Promise<unknown>;
}

/**
 * HashKV of one member. etcd3 1.1.2 calls the gRPC method `hashKV`, which grpc-js does not define
 * (it knows `HashKV` and `hashKv`), so its own `maintenance.hashKV()` always fails; this calls the
 * method by its proto name through the same connection pool, with the same no-retry policy.
 */
export async function memberHashKV(
  client: Etcd3,
  revision: string,
): Promise<{ hash: string; compactRevision: string }> {
  const callable = (client.maintenance as unknown as { client?: Callable }).client;
  if (typeof callable?.exec !== 'function')
    throw new Error('etcd3 internals changed: no Maintenance callable');
  const response = (await callable.exec('Maintenance', 'HashKV', { revision })) as IHashKVResponse;
  return { hash: String(response.hash), compactRevision: response.compact_revision };
}

/** Each member's HashKV at one revision; equal hashes mean equal key-value history up to it. */
export interface HashKVComparison {
  readonly revision: string;
  readonly hashes: ReadonlyMap<string, string>;
  readonly consistent: boolean;
}

/** Compares HashKV of every listed client URL at `revision` (default: the cluster's current revision). */
export async function compareHashKV(
  connection: EtcdConnection,
  clientUrls: readonly string[],
  revision?: string,
): Promise<HashKVComparison> {
  const at =
    revision ??
    (await askAnyEndpoint(connection, 'read revision', async (c) => {
      const range = await c.kv.range({ key: Buffer.from('\0'), keys_only: true, limit: 1 });
      return range.header.revision;
    }));
  const hashes = new Map<string, string>();
  for (const url of clientUrls) {
    try {
      hashes.set(url, (await withMemberClient(connection, url, (c) => memberHashKV(c, at))).hash);
    } catch (error) {
      throw new EtcdEngineError('compare hashKV', 'Unreachable', messageOf(error), {
        member: url,
        cause: error,
      });
    }
  }
  return { revision: at, hashes, consistent: new Set(hashes.values()).size === 1 };
}

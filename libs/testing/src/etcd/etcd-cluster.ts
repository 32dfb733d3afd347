import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allocateEtcdMember,
  startEtcdMember,
  type EtcdMemberAddress,
  type EtcdJoin,
  type RunningEtcdMember,
} from './etcd-member.ts';
import { createEtcdClientTls, type EtcdClientTls } from './etcd-tls.ts';

export interface EtcdClusterOptions {
  /** Members started together with initial-cluster-state new (default 1). */
  readonly size?: number;
  /** Name prefix of the members: `<prefix>-0`, `<prefix>-1`... (default "etcd"). */
  readonly namePrefix?: string;
  readonly token?: string;
  /** Extra flags for every member. */
  readonly extraFlags?: readonly string[];
  /** Keep the work directory after stop(), for debugging. */
  readonly keepWorkDir?: boolean;
  /**
   * Serve clients over TLS with a generated CA, requiring client certificates (as the operator's
   * clusters do); `clientTls` on the cluster then holds the files a client needs.
   */
  readonly clientTls?: boolean;
}

/** A real etcd cluster on loopback, owned by one test file. */
export interface EtcdTestCluster {
  readonly workDir: string;
  readonly token: string;
  /** The CA and certificates of client TLS, when the cluster was started with `clientTls`. */
  readonly clientTls: EtcdClientTls | undefined;
  /** Members started by this helper and still tracked (running or stopped). */
  readonly members: Map<string, RunningEtcdMember>;
  /** Client URLs of the members whose process is running. */
  clientUrls(): string[];
  /** The address of member `name`: the one allocated before, or fresh free ports and a data dir under workDir. */
  address(name: string): Promise<EtcdMemberAddress>;
  /** Starts (or restarts) a member process; resolves once its client port answers. */
  start(member: EtcdMemberAddress, join: EtcdJoin, waitHealthy?: boolean): Promise<RunningEtcdMember>;
  /** Stops every member process and removes the work directory. */
  stop(): Promise<void>;
}

/** `name=peerURL,...` for etcd's --initial-cluster. */
export function initialClusterOf(members: readonly EtcdMemberAddress[]): string {
  return members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
}

/** Starts `size` etcd members on free loopback ports as one new cluster and waits until it is healthy. */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdTestCluster> {
  const workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-'));
  const token = options.token ?? `homeostat-${Date.now().toString(36)}`;
  const prefix = options.namePrefix ?? 'etcd';
  const members = new Map<string, RunningEtcdMember>();
  const addresses = new Map<string, EtcdMemberAddress>();
  const extraFlags = options.extraFlags ?? [];
  const clientTls = options.clientTls
    ? await createEtcdClientTls(workDir).catch(async (error: unknown) => {
        await rm(workDir, { recursive: true, force: true });
        throw error;
      })
    : undefined;

  const cluster: EtcdTestCluster = {
    workDir,
    token,
    clientTls,
    members,
    clientUrls: () => [...members.values()].filter((m) => m.process.isRunning()).map((m) => m.clientUrl),
    async address(name) {
      const known = addresses.get(name);
      if (known) return known;
      const fresh = await allocateEtcdMember(workDir, name, clientTls ? 'https' : 'http');
      addresses.set(name, fresh);
      return fresh;
    },
    async start(member, join, waitHealthy = true) {
      const running = await startEtcdMember(member, join, {
        extraFlags,
        waitHealthy,
        ...(clientTls ? { clientTls } : {}),
      });
      members.set(member.name, running);
      return running;
    },
    async stop() {
      await Promise.all([...members.values()].map((m) => m.process.stop(2000)));
      if (!options.keepWorkDir) await rm(workDir, { recursive: true, force: true });
    },
  };

  try {
    const addresses: EtcdMemberAddress[] = [];
    for (let i = 0; i < (options.size ?? 1); i++) addresses.push(await cluster.address(`${prefix}-${i}`));
    const join: EtcdJoin = {
      initialCluster: initialClusterOf(addresses),
      initialClusterState: 'new',
      initialClusterToken: token,
    };
    // Members of a new cluster wait for each other before electing a leader: start all, then wait.
    await Promise.all(addresses.map((address) => cluster.start(address, join)));
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

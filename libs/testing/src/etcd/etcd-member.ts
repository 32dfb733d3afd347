import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { binaryPath } from '../binaries.ts';
import { startProcess, logTail, type ManagedProcess } from '../managed-process.ts';
import { httpGet, waitUntil } from '../readiness.ts';
import { freeLoopbackPort } from '../free-port.ts';
import { etcdClientTlsFlags, type EtcdClientTls } from './etcd-tls.ts';

/** Where one etcd member lives on loopback: its name, URLs and data directory. */
export interface EtcdMemberAddress {
  readonly name: string;
  readonly peerUrl: string;
  readonly clientUrl: string;
  readonly dataDir: string;
}

/** How a member joins: the cluster it belongs to and whether that cluster is new or existing. */
export interface EtcdJoin {
  /** `name=peerURL,...`, every member the new member must know about (itself included). */
  readonly initialCluster: string;
  readonly initialClusterState: 'new' | 'existing';
  readonly initialClusterToken: string;
}

export interface EtcdMemberOptions {
  /** Extra etcd flags, e.g. `--quota-backend-bytes=...`. */
  readonly extraFlags?: readonly string[];
  /** Waits for /health to say true (a learner or a member of a cluster without quorum never does). */
  readonly waitHealthy?: boolean;
  readonly startTimeoutMs?: number;
  /** Serve the client URL (which must then be https://) with these certificates, client certificates required. */
  readonly clientTls?: EtcdClientTls;
}

/** A running etcd member process started by a test. */
export interface RunningEtcdMember extends EtcdMemberAddress {
  readonly process: ManagedProcess;
}

/**
 * Picks two free loopback ports and names the member's URLs and data directory under `workDir`;
 * `clientScheme` https for a member that serves clients over TLS.
 */
export async function allocateEtcdMember(
  workDir: string,
  name: string,
  clientScheme: 'http' | 'https' = 'http',
): Promise<EtcdMemberAddress> {
  const clientPort = await freeLoopbackPort();
  let peerPort = await freeLoopbackPort();
  while (peerPort === clientPort) peerPort = await freeLoopbackPort();
  return {
    name,
    clientUrl: `${clientScheme}://127.0.0.1:${clientPort}`,
    peerUrl: `http://127.0.0.1:${peerPort}`,
    dataDir: join(workDir, `${name}.data`),
  };
}

/** The etcd command line for a member; short timings keep elections quick on loopback. */
export function etcdMemberArgs(
  member: EtcdMemberAddress,
  join: EtcdJoin,
  extraFlags: readonly string[] = [],
) {
  return [
    `--name=${member.name}`,
    `--data-dir=${member.dataDir}`,
    `--listen-client-urls=${member.clientUrl}`,
    `--advertise-client-urls=${member.clientUrl}`,
    `--listen-peer-urls=${member.peerUrl}`,
    `--initial-advertise-peer-urls=${member.peerUrl}`,
    `--initial-cluster=${join.initialCluster}`,
    `--initial-cluster-state=${join.initialClusterState}`,
    `--initial-cluster-token=${join.initialClusterToken}`,
    // Test data is thrown away; durability is not what these tests check.
    '--unsafe-no-fsync',
    '--heartbeat-interval=100',
    '--election-timeout=1000',
    '--log-level=warn',
    ...extraFlags,
  ];
}

/** Starts one etcd member process (in its own process group, dying with the test run). */
export async function startEtcdMember(
  member: EtcdMemberAddress,
  join: EtcdJoin,
  options: EtcdMemberOptions = {},
): Promise<RunningEtcdMember> {
  await mkdir(member.dataDir, { recursive: true, mode: 0o700 });
  const tls = options.clientTls;
  if (tls && !member.clientUrl.startsWith('https://'))
    throw new Error(`etcd ${member.name}: client TLS needs an https:// client URL, not ${member.clientUrl}`);
  const process = startProcess({
    name: `etcd ${member.name}`,
    command: binaryPath('etcd'),
    logFile: `${member.dataDir}.log`,
    args: etcdMemberArgs(member, join, [
      ...(tls ? etcdClientTlsFlags(tls) : []),
      ...(options.extraFlags ?? []),
    ]),
  });
  const running = { ...member, process };
  const exitReason = process.exited.then((code) => `etcd ${member.name} exited (${String(code)})`);
  // /health answers once the member serves clients; a learner answers false until it is promoted,
  // so for a joining learner we only wait until the client port answers at all.
  await waitUntil(
    `etcd member ${member.name} at ${member.clientUrl}`,
    async () => {
      const { body } = await httpGet(
        `${member.clientUrl}/health`,
        tls ? { ca: tls.ca, cert: tls.client.cert, key: tls.client.key } : undefined,
      );
      return options.waitHealthy === false || body.includes('"health":"true"');
    },
    {
      timeoutMs: options.startTimeoutMs ?? 60_000,
      intervalMs: 100,
      abort: exitReason,
      describe: () => logTail(process.logFile),
    },
  );
  return running;
}

/** Stops a member and deletes its data directory, as when a machine and its disk are lost. */
export async function destroyEtcdMember(member: RunningEtcdMember): Promise<void> {
  await member.process.stop(0);
  await rm(member.dataDir, { recursive: true, force: true });
}

// Reads cluster access the way kubectl and client-go do, without @kubernetes/client-node:
// $KUBECONFIG (a list of files, merged first-wins), else ~/.kube/config, else the in-cluster
// service account. Supports what operators meet: client certificates, bearer tokens (inline, from a
// file, from an exec plugin), basic auth, CA data or files, insecure-skip-tls-verify and
// tls-server-name. Tokens are re-read on every credentials() call (the transport asks about once a
// minute), so a rotated service-account token or an expiring exec token is picked up.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import type { ClusterAccess, Credentials } from './cluster-access.ts';

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubeconfig that cannot be used, with what is wrong and where. */
export class KubeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
}

interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
}

interface UserEntry {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  exec?: ExecConfig;
  'auth-provider'?: unknown;
}

interface KubeConfigFile {
  'current-context'?: string;
  clusters?: { name: string; cluster: ClusterEntry }[];
  users?: { name: string; user: UserEntry }[];
  contexts?: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
}

/** Cluster access from $KUBECONFIG, ~/.kube/config or the in-cluster service account, in that order. */
export async function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): Promise<ClusterAccess> {
  const files = (env['KUBECONFIG'] ?? '').split(delimiter).filter(Boolean);
  if (files.length) return fromKubeconfigFiles(files);
  const home = join(env['HOME'] ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromKubeconfigFiles([home]);
  if (env['KUBERNETES_SERVICE_HOST']) return inCluster(env);
  throw new KubeConfigError(
    'no cluster to talk to: set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account',
  );
}

/** Cluster access from the pod's service account (token re-read on every call: it rotates). */
export function inCluster(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir): ClusterAccess {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '443';
  if (!host) throw new KubeConfigError('not in a cluster: KUBERNETES_SERVICE_HOST is not set');
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const ca = readFileSync(join(dir, 'ca.crt'));
  return {
    server,
    async credentials() {
      const token = readFileSync(join(dir, 'token'), 'utf8').trim();
      return { ca, headers: { authorization: `Bearer ${token}` } };
    },
  };
}

/** Cluster access from kubeconfig files merged as kubectl merges them (first definition wins). */
export async function fromKubeconfigFiles(paths: readonly string[]): Promise<ClusterAccess> {
  const { parse } = await import('yaml');
  const merged: Required<Pick<KubeConfigFile, 'clusters' | 'users' | 'contexts'>> & {
    current?: string | undefined;
  } = { clusters: [], users: [], contexts: [] };
  const baseDir = new Map<string, string>(); // entry name → directory of the file that defined it
  for (const path of paths) {
    if (!existsSync(path)) throw new KubeConfigError(`kubeconfig ${path} does not exist`);
    const file = (parse(readFileSync(path, 'utf8')) ?? {}) as KubeConfigFile;
    merged.current ??= file['current-context'] || undefined;
    for (const [list, into] of [
      [file.clusters, merged.clusters],
      [file.users, merged.users],
      [file.contexts, merged.contexts],
    ] as const) {
      for (const entry of list ?? []) {
        if ((into as { name: string }[]).some((e) => e.name === entry.name)) continue;
        (into as unknown[]).push(entry);
        baseDir.set(`${list === file.users ? 'user' : 'cluster'}/${entry.name}`, dirname(path));
      }
    }
  }
  const where = paths.join(delimiter);
  const contextName = merged.current;
  if (!contextName) throw new KubeConfigError(`kubeconfig ${where} has no current-context`);
  const context = merged.contexts.find((c) => c.name === contextName)?.context;
  if (!context) throw new KubeConfigError(`kubeconfig ${where}: context ${contextName} is not defined`);
  const cluster = merged.clusters.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) {
    throw new KubeConfigError(
      `kubeconfig ${where}: cluster ${context.cluster} is not defined or has no server`,
    );
  }
  const user = merged.users.find((u) => u.name === context.user)?.user ?? {};
  if (user['auth-provider']) {
    throw new KubeConfigError(
      `kubeconfig ${where}: user ${context.user} uses an auth-provider, which is not supported; use an exec plugin`,
    );
  }
  const clusterDir = baseDir.get(`cluster/${context.cluster}`) ?? '.';
  const userDir = baseDir.get(`user/${context.user}`) ?? '.';
  const material = (data: string | undefined, file: string | undefined, dir: string) =>
    data
      ? Buffer.from(data, 'base64')
      : file
        ? readFileSync(isAbsolute(file) ? file : join(dir, file))
        : undefined;
  const fixed = {
    ca: material(cluster['certificate-authority-data'], cluster['certificate-authority'], clusterDir),
    cert: material(user['client-certificate-data'], user['client-certificate'], userDir),
    key: material(user['client-key-data'], user['client-key'], userDir),
    ...(cluster['insecure-skip-tls-verify'] ? { rejectUnauthorized: false } : {}),
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
  };
  const exec = user.exec ? execCredentials(user.exec, context.user) : undefined;
  return {
    server: cluster.server,
    async credentials(): Promise<Credentials> {
      const headers: Record<string, string> = {};
      if (user.token) headers['authorization'] = `Bearer ${user.token}`;
      else if (user.tokenFile) {
        const path = isAbsolute(user.tokenFile) ? user.tokenFile : join(userDir, user.tokenFile);
        headers['authorization'] = `Bearer ${readFileSync(path, 'utf8').trim()}`;
      } else if (user.username !== undefined) {
        const basic = Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64');
        headers['authorization'] = `Basic ${basic}`;
      }
      if (!exec) return { ...fixed, headers };
      const fromPlugin = await exec();
      if (fromPlugin.token) headers['authorization'] = `Bearer ${fromPlugin.token}`;
      return {
        ...fixed,
        ...(fromPlugin.cert ? { cert: fromPlugin.cert } : {}),
        ...(fromPlugin.key ? { key: fromPlugin.key } : {}),
        headers,
      };
    },
  };
}

interface ExecResult {
  token?: string;
  cert?: string;
  key?: string;
}

// Runs a client-go credential plugin and keeps its answer until it expires.
function execCredentials(config: ExecConfig, userName: string): () => Promise<ExecResult> {
  let cached: { result: ExecResult; expiresAt: number } | undefined;
  return async () => {
    if (cached && Date.now() < cached.expiresAt) return cached.result;
    const env = { ...process.env };
    for (const { name, value } of config.env ?? []) env[name] = value;
    env['KUBERNETES_EXEC_INFO'] = JSON.stringify({
      apiVersion: config.apiVersion ?? 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    let stdout: string;
    try {
      // Loaded only when a kubeconfig names a plugin: node:child_process costs every operator
      // about 0.3 MB of resident memory, and in a pod the service account is used instead.
      const { execFile } = await import('node:child_process');
      ({ stdout } = await promisify(execFile)(config.command, config.args ?? [], { env, timeout: 30_000 }));
    } catch (error) {
      throw new KubeConfigError(
        `the exec credential plugin of user ${userName} (${config.command}) failed: ${(error as Error).message}`,
      );
    }
    const status = (
      JSON.parse(stdout) as {
        status?: {
          token?: string;
          clientCertificateData?: string;
          clientKeyData?: string;
          expirationTimestamp?: string;
        };
      }
    ).status;
    const result: ExecResult = {
      ...(status?.token ? { token: status.token } : {}),
      ...(status?.clientCertificateData ? { cert: status.clientCertificateData } : {}),
      ...(status?.clientKeyData ? { key: status.clientKeyData } : {}),
    };
    // Without an expiry the answer holds until the process ends, as client-go does.
    const expiresAt = status?.expirationTimestamp
      ? Date.parse(status.expirationTimestamp) - 10_000
      : Infinity;
    cached = { result, expiresAt };
    return result;
  };
}

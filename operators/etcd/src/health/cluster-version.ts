// etcd's cluster version: the minor every member has agreed on, decided by the leader once every
// member runs it. The gRPC Maintenance Status call reports only the member's own version; the
// cluster version is on the client port's HTTP /version endpoint ({"etcdserver", "etcdcluster"}),
// which etcd serves beside gRPC with the same TLS and client certificate.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';

/** What one member's /version says: its own version and the cluster's (undefined while undecided). */
export interface MemberVersions {
  readonly server: string;
  readonly cluster: string | undefined;
}

const versionPattern = /^\d+\.\d+\.\d+$/;

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

function getVersionDocument(connection: EtcdConnection, clientUrl: string): Promise<string> {
  const url = new URL('/version', clientUrl);
  const signal = AbortSignal.timeout(connection.callTimeoutMs ?? 5000);
  const credentials = connection.credentials;
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${url.href} answered ${response.statusCode ?? 'no status'}`));
        return;
      }
      readBody(response).then(resolve, reject);
    };
    const request =
      url.protocol === 'https:'
        ? httpsRequest(
            url,
            {
              signal,
              // A connection of its own, closed after the answer: no pooled socket outlives the call.
              agent: false,
              ...(credentials
                ? {
                    ca: credentials.rootCertificate,
                    ...(credentials.certChain ? { cert: credentials.certChain } : {}),
                    ...(credentials.privateKey ? { key: credentials.privateKey } : {}),
                  }
                : {}),
            },
            onResponse,
          )
        : httpRequest(url, { signal, agent: false }, onResponse);
    request.on('error', reject);
    request.end();
  });
}

/** Reads one member's /version; the cluster version is undefined until the leader has decided it. */
export async function readMemberVersions(
  connection: EtcdConnection,
  clientUrl: string,
): Promise<MemberVersions> {
  let document: unknown;
  try {
    document = JSON.parse(await getVersionDocument(connection, clientUrl));
  } catch (error) {
    throw new EtcdEngineError('read the cluster version', 'Unreachable', messageOf(error), {
      member: clientUrl,
      cause: error,
    });
  }
  const field = (name: string): string => {
    if (typeof document !== 'object' || document === null) return '';
    const value: unknown = Reflect.get(document, name);
    return typeof value === 'string' ? value : '';
  };
  const server = field('etcdserver');
  const cluster = field('etcdcluster');
  return { server, cluster: versionPattern.test(cluster) ? cluster : undefined };
}

/**
 * The cluster version as the first of `clientUrls` that knows it says (put the leader's first: it
 * decides the version and the others learn it from it); undefined when none answers with one.
 */
export async function readClusterVersion(
  connection: EtcdConnection,
  clientUrls: readonly string[],
): Promise<string | undefined> {
  for (const url of clientUrls) {
    try {
      const { cluster } = await readMemberVersions(connection, url);
      if (cluster) return cluster;
    } catch {
      // A member down is no reason to give up: the next one knows the same cluster version.
    }
  }
  return undefined;
}

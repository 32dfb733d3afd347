// How the transport reaches the API server: its address and the credentials to present.
//
// The library reads kubeconfig files and the in-cluster service account itself
// (kubeconfig-loader.ts) instead of importing @kubernetes/client-node at run time: that import
// alone costs an operator about 100 MB of resident memory, more than everything else it does.
// A client-node KubeConfig is still accepted (tests and tools that already hold one).
import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';

/** What a request presents: TLS material and headers (a bearer token, basic auth). */
export interface Credentials {
  ca?: string | Buffer | undefined;
  cert?: string | Buffer | undefined;
  key?: string | Buffer | undefined;
  /** False only when the kubeconfig says insecure-skip-tls-verify. */
  rejectUnauthorized?: boolean | undefined;
  /** The name to check the server's certificate against, when it differs from the URL's host. */
  servername?: string | undefined;
  headers: Record<string, string>;
}

/** An API server and a way to get current credentials for it (tokens rotate; re-asked often). */
export interface ClusterAccess {
  /** The API server's URL, e.g. https://10.96.0.1:443. */
  readonly server: string;
  /** Current credentials; called again every minute or so, so rotated tokens are picked up. */
  credentials(): Promise<Credentials>;
}

/** Where a client connects: the library's own ClusterAccess, or a client-node KubeConfig. */
export type ClusterSource = ClusterAccess | KubeConfig;

/** The ClusterAccess for either kind of source. */
export function clusterAccess(source: ClusterSource): ClusterAccess {
  if ('credentials' in source) return source;
  return fromClientNode(source);
}

function fromClientNode(kubeConfig: KubeConfig): ClusterAccess {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  return {
    server: cluster.server,
    async credentials() {
      const options: RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      // applyToHTTPSOptions builds an agent each call; the transport uses its own shared one.
      (options.agent as { destroy?: () => void } | undefined)?.destroy?.();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (typeof value === 'string') headers[name] = value;
      }
      if (options.auth) headers['authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      return {
        ca: options.ca as string | Buffer | undefined,
        cert: options.cert as string | Buffer | undefined,
        key: options.key as string | Buffer | undefined,
        rejectUnauthorized: options.rejectUnauthorized,
        servername: options.servername,
        headers,
      };
    },
  };
}

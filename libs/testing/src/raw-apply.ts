import { request } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';

/**
 * Server-side applies `obj` at `path` as plain JSON. @kubernetes/client-node's typed serializer
 * drops fields its models spell differently (a CRD's `x-kubernetes-validations`, `enum`), so CRDs
 * are sent untouched this way.
 */
export async function rawApply(
  kubeConfig: KubeConfig,
  path: string,
  obj: KubernetesObject,
  fieldManager: string,
): Promise<void> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const url = new URL(path, server);
  url.searchParams.set('fieldManager', fieldManager);
  url.searchParams.set('force', 'true');
  const body = JSON.stringify(obj);
  await new Promise<void>((resolve, reject) => {
    const req = request(
      url,
      {
        ...options,
        method: 'PATCH',
        headers: {
          ...options.headers,
          'content-type': 'application/apply-patch+yaml',
          accept: 'application/json',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          (res.statusCode ?? 0) < 300
            ? resolve()
            : reject(new Error(`PATCH ${url.pathname}: ${res.statusCode}: ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

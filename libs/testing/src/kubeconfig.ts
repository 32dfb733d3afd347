import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pemAsBase64, type ControlPlanePki } from './pki.ts';

/** Writes a self-contained kubeconfig (certificates inlined) that kubectl accepts; returns it loaded. */
export async function writeAdminKubeconfig(
  path: string,
  server: string,
  pki: ControlPlanePki,
): Promise<KubeConfig> {
  const [ca, cert, key] = await Promise.all([
    pemAsBase64(pki.caCert),
    pemAsBase64(pki.adminCert),
    pemAsBase64(pki.adminKey),
  ]);
  const name = 'homeostat-test';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: `${name}-admin`, user: { 'client-certificate-data': cert, 'client-key-data': key } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
    'current-context': name,
  };
  // JSON is valid YAML, and kubectl reads it as a kubeconfig.
  const text = JSON.stringify(config, null, 2);
  await writeFile(path, text, { mode: 0o600 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(text);
  return kubeConfig;
}

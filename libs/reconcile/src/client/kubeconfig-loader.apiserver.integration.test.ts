// The library's own kubeconfig loader, talking to a real kube-apiserver + etcd (shared by this
// project's tests) with the credentials each kubeconfig shape carries.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedKubeconfigPath } from '@homeostat/testing/shared';
import { KubeClient } from './kube-client.ts';
import { builtin } from './resource-type.ts';
import type { ClusterAccess } from './cluster-access.ts';
import { KubeConfigError, fromKubeconfigFiles, inCluster, loadKubeConfig } from './kubeconfig-loader.ts';

interface AdminConfig {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-loader-'));
const admin = JSON.parse(readFileSync(sharedKubeconfigPath(), 'utf8')) as AdminConfig;
const [{ cluster }] = admin.clusters as [AdminConfig['clusters'][number]];
const [{ user }] = admin.users as [AdminConfig['users'][number]];
const clients: KubeClient[] = [];

function write(name: string, content: unknown): string {
  const path = join(dir, name);
  const text = typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

async function namespacesVisible(access: ClusterAccess): Promise<boolean> {
  const client = new KubeClient(access, { fieldManager: 'loader-test' });
  clients.push(client);
  const { items } = await client.list(builtin.namespaces);
  return items.some((n) => n.metadata?.name === 'default');
}

describe('the kubeconfig loader, on a real kube-apiserver + etcd', () => {
  afterAll(() => clients.forEach((c) => c.close()));

  it('reads $KUBECONFIG with inline certificates, as the control plane writes it', async () => {
    expect(await namespacesVisible(await loadKubeConfig({ KUBECONFIG: sharedKubeconfigPath() }))).toBe(true);
  });

  it('merges a list of files first-wins, and reads certificate files relative to their kubeconfig', async () => {
    write('ca.crt', Buffer.from(cluster['certificate-authority-data'], 'base64'));
    write('admin.crt', Buffer.from(user['client-certificate-data'], 'base64'));
    write('admin.key', Buffer.from(user['client-key-data'], 'base64'));
    const selector = write(
      'selector.yaml',
      'current-context: split\ncontexts:\n- name: split\n  context: {cluster: c, user: u}\n',
    );
    const definitions = write('definitions.yaml', {
      'current-context': 'ignored-because-the-first-file-sets-one',
      clusters: [{ name: 'c', cluster: { server: cluster.server, 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'u', user: { 'client-certificate': 'admin.crt', 'client-key': './admin.key' } }],
      contexts: [{ name: 'split', context: { cluster: 'wrong', user: 'wrong' } }],
    });
    expect(await namespacesVisible(await loadKubeConfig({ KUBECONFIG: `${selector}:${definitions}` }))).toBe(
      true,
    );
  });

  it('gets client credentials from an exec plugin', async () => {
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: {
        clientCertificateData: Buffer.from(user['client-certificate-data'], 'base64').toString(),
        clientKeyData: Buffer.from(user['client-key-data'], 'base64').toString(),
      },
    };
    const plugin = write(
      'plugin.mjs',
      `process.stdout.write(${JSON.stringify(JSON.stringify(credential))});\n`,
    );
    const path = write('exec.yaml', {
      'current-context': 'x',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user: { exec: { command: process.execPath, args: [plugin] } } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    });
    expect(await namespacesVisible(await fromKubeconfigFiles([path]))).toBe(true);
  });

  it('reads the in-cluster service account, and a rotated token on the next call', async () => {
    const sa = mkdtempSync(join(dir, 'sa-'));
    writeFileSync(join(sa, 'ca.crt'), Buffer.from(cluster['certificate-authority-data'], 'base64'));
    writeFileSync(join(sa, 'token'), 'first\n');
    const access = inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    expect(access.server).toBe('https://10.96.0.1:443');
    expect((await access.credentials()).headers).toEqual({ authorization: 'Bearer first' });
    writeFileSync(join(sa, 'token'), 'rotated\n');
    expect((await access.credentials()).headers).toEqual({ authorization: 'Bearer rotated' });
  });

  it('says what is wrong with a kubeconfig it cannot use', async () => {
    await expect(loadKubeConfig({ KUBECONFIG: join(dir, 'missing') })).rejects.toThrow(/does not exist/);
    const noContext = write('no-context.yaml', { clusters: [] });
    await expect(fromKubeconfigFiles([noContext])).rejects.toThrow(/has no current-context/);
    const dangling = write('dangling.yaml', { 'current-context': 'gone' });
    await expect(fromKubeconfigFiles([dangling])).rejects.toThrow(/context gone is not defined/);
    await expect(loadKubeConfig({ HOME: dir })).rejects.toBeInstanceOf(KubeConfigError);
  });
});

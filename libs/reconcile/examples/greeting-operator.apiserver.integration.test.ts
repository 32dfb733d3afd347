// Runs the README's example operator as a process against a real kube-apiserver + etcd.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig, sharedKubeconfigPath } from '@homeostat/testing/shared';
import { KubeClient, builtin } from '../src/index.ts';
import { greetingCrd, greetings } from './greeting-operator.ts';

describe('the README example operator, on a real kube-apiserver + etcd', () => {
  const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'test' });
  const operator = spawn(
    process.execPath,
    [fileURLToPath(new URL('./greeting-operator.ts', import.meta.url))],
    {
      env: { ...process.env, KUBECONFIG: sharedKubeconfigPath(), POD_NAMESPACE: 'default' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  afterAll(() => {
    operator.kill('SIGTERM');
    client.close();
  });

  it('writes a ConfigMap for a Greeting and marks it Ready', async () => {
    await installCrds(sharedKubeConfig(), [greetingCrd]);
    await client.create(greetings, {
      metadata: { name: 'hello', namespace: 'default' },
      spec: { message: 'hello, world' },
    });
    await waitUntil(
      'the example operator wrote the ConfigMap',
      async () =>
        (await client.find(builtin.configMaps, 'hello', 'default'))?.data?.['message'] === 'hello, world',
      { timeoutMs: 30_000 },
    );
    await waitUntil(
      'the Greeting is Ready',
      async () =>
        (await client.get(greetings, 'hello', 'default')).status?.conditions?.[0]?.status === 'True',
      { timeoutMs: 30_000, describe: () => 'see status' },
    );
    expect(operator.exitCode).toBeNull();
  });
});

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestCa, issueTestCertificate, type TestCertificate } from '../pki.ts';

/**
 * Client TLS for test etcd members, as etcd runs it in the operator's clusters: members serve
 * clients over TLS and require a client certificate signed by the cluster's CA
 * (`--client-cert-auth`). Peers stay plaintext: tests of the client path do not need peer TLS.
 */
export interface EtcdClientTls {
  /** The CA that signed both certificates (PEM file). */
  readonly ca: string;
  /** What every member serves its client URLs with: loopback names (127.0.0.1, localhost). */
  readonly server: TestCertificate;
  /** What clients present (CN `homeostat-test-client`). */
  readonly client: TestCertificate;
}

/** Makes a CA, a loopback serving certificate and a client certificate under `<workDir>/client-tls`. */
export async function createEtcdClientTls(workDir: string): Promise<EtcdClientTls> {
  const dir = join(workDir, 'client-tls');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ca = await createTestCa(dir, 'ca', 'homeostat-test-etcd-ca');
  const [server, client] = await Promise.all([
    issueTestCertificate(ca, dir, 'server', {
      subject: '/CN=homeostat-test-etcd',
      sans: ['IP:127.0.0.1', 'DNS:localhost'],
      usages: ['serverAuth'],
      describe: 'the etcd client-port serving certificate',
    }),
    issueTestCertificate(ca, dir, 'client', {
      subject: '/CN=homeostat-test-client',
      usages: ['clientAuth'],
      describe: 'the etcd client certificate',
    }),
  ]);
  return { ca: ca.cert, server, client };
}

/** The etcd flags that serve client URLs with `tls` and require client certificates. */
export function etcdClientTlsFlags(tls: EtcdClientTls): string[] {
  return [
    `--cert-file=${tls.server.cert}`,
    `--key-file=${tls.server.key}`,
    `--trusted-ca-file=${tls.ca}`,
    '--client-cert-auth=true',
  ];
}

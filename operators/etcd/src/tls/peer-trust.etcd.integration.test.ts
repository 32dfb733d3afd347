// Who may speak raft to a member: real etcd processes run with the flags the operator writes into
// member pods and the certificates it generates for a cluster (one CA signs them all). Two members
// form a cluster over their peer ports; the peer certificate gets an answer on a peer port, the
// client certificate applications are given does not.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  etcdBinaryPath,
  etcdVersion,
  freeLoopbackPort,
  httpGet,
  logTail,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';
import { clusterCertificateRequests } from '../controllers/cluster-tls.ts';
import {
  dataDir,
  memberFlags,
  peerTlsDir,
  serverTlsDir,
  type MemberPodInput,
} from '../controllers/desired-member-pod.ts';
import { testCluster } from '../test-support/test-cluster.ts';
import { createCertificateAuthority, issueCertificate, type CertificatePem } from './certificates.ts';

interface Member {
  readonly name: string;
  readonly peerPort: number;
  readonly clientPort: number;
  readonly metricsPort: number;
}

/** GET /version on a peer port over HTTP/1.1 with `identity`: the status, or the error's message. */
function peerVersion(port: number, ca: string, identity: CertificatePem): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/version',
        ca,
        cert: identity.certificate,
        key: identity.privateKey,
        timeout: 5000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => resolve(error.message));
    req.end();
  });
}

describe('peer ports accept only peer certificates (real etcd, generated certificates)', () => {
  const cluster = testCluster({ tls: { enabled: true } });
  let workDir: string;
  let ca: CertificatePem;
  let certificates: Record<'server' | 'peer' | 'client', CertificatePem>;
  const members: Member[] = [];
  const processes: ManagedProcess[] = [];

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-peer-trust-'));
    ca = await createCertificateAuthority('orders.shop etcd CA', 1);
    const requests = clusterCertificateRequests('orders', {
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    certificates = {
      server: await issueCertificate(ca, requests.server),
      peer: await issueCertificate(ca, requests.peer),
      client: await issueCertificate(ca, requests.client),
    };
    // Six different ports: the free-port probe may hand out one twice.
    const taken = new Set<number>();
    const port = async () => {
      let candidate = await freeLoopbackPort();
      while (taken.has(candidate)) candidate = await freeLoopbackPort();
      taken.add(candidate);
      return candidate;
    };
    for (const name of ['orders-0', 'orders-1']) {
      members.push({ name, peerPort: await port(), clientPort: await port(), metricsPort: await port() });
    }
    const initialCluster = members.map((m) => `${m.name}=https://127.0.0.1:${m.peerPort}`).join(',');
    for (const member of members) {
      // The Secrets as the pod mounts them, in directories of this member's own.
      const dirs = { server: join(workDir, member.name, 'server'), peer: join(workDir, member.name, 'peer') };
      for (const role of ['server', 'peer'] as const) {
        await mkdir(dirs[role], { recursive: true, mode: 0o700 });
        await writeFile(join(dirs[role], 'tls.crt'), certificates[role].certificate);
        await writeFile(join(dirs[role], 'tls.key'), certificates[role].privateKey, { mode: 0o600 });
        await writeFile(join(dirs[role], 'ca.crt'), ca.certificate);
      }
      const input: MemberPodInput = {
        member: member.name,
        image: `gcr.io/etcd-development/etcd:${etcdVersion}`,
        urls: {
          peerUrl: `https://127.0.0.1:${member.peerPort}`,
          clientUrl: `https://127.0.0.1:${member.clientPort}`,
        },
        listen: {
          peer: `https://127.0.0.1:${member.peerPort}`,
          client: `https://127.0.0.1:${member.clientPort}`,
          metrics: `http://127.0.0.1:${member.metricsPort}`,
        },
        join: { initialCluster, state: 'new' },
        memberId: 'seed',
        tls: {
          serverSecret: 'orders-server-tls',
          peerSecret: 'orders-peer-tls',
          peerCommonName: 'orders-peer',
        },
      };
      const args = memberFlags(cluster, input).map((arg) =>
        arg
          .replace(`=${dataDir}`, `=${join(workDir, member.name, 'data')}`)
          .replace(`=${serverTlsDir}/`, `=${dirs.server}/`)
          .replace(`=${peerTlsDir}/`, `=${dirs.peer}/`),
      );
      processes.push(
        startProcess({
          name: `etcd ${member.name}`,
          command: etcdBinaryPath('etcd'),
          args: [...args, '--unsafe-no-fsync', '--heartbeat-interval=100', '--election-timeout=1000'],
          logFile: join(workDir, `${member.name}.log`),
        }),
      );
    }
    // /readyz answers 200 only once the member has a leader: the two formed a cluster over TLS.
    for (const member of members) {
      await waitUntil(
        `${member.name} ready`,
        async () => (await httpGet(`http://127.0.0.1:${member.metricsPort}/readyz`)).status === 200,
        {
          timeoutMs: 60_000,
          intervalMs: 200,
          describe: () => logTail(join(workDir, `${member.name}.log`)),
        },
      );
    }
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(2000)));
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('answers a peer certificate on the peer port', async () => {
    for (const member of members) {
      expect(await peerVersion(member.peerPort, ca.certificate, certificates.peer)).toBe(200);
    }
  });

  it('refuses the client certificate applications get, and the server certificate, on the peer port', async () => {
    for (const member of members) {
      for (const identity of [certificates.client, certificates.server]) {
        const answer = await peerVersion(member.peerPort, ca.certificate, identity);
        expect(answer, `${member.name} answered the peer port with ${String(answer)}`).toEqual(
          expect.any(String),
        );
      }
    }
  });
});

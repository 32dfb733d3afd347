// The self-fence watcher (entrypoint/instance.sh, ADR 0203) on a real primary, with the cluster
// DNS answering whatever the network does, as a node-local DNS cache answers from memory through
// a partition. Cut off from the API server (a TCP listener here) and its peer (an address where
// nothing listens), the primary must stop itself all the same; a primary that knows no other
// instance keeps running, since no failover could replace it. The answering DNS is an /etc/hosts
// of the watcher's own, bind-mounted in a mount namespace of its own: root only.
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('a cut-off primary whose DNS still answers (a node-local cache)', () => {
  const bed = new PostgresTestBed('selffence');
  const apis: Server[] = [];
  afterAll(async () => {
    for (const api of apis) api.close();
    await bed.cleanup();
  });

  /**
   * A primary `name` and its watcher, with an API server (a listener that accepts and closes: a TCP
   * connect needs nothing more) and an /etc/hosts that answers `kubernetes.default.svc` and, with
   * `peer`, the headless Service's name with that address (the watcher asks it on `peerPort`, its
   * own PGPORT; by default the primary's own port, where nothing listens at that address).
   */
  async function watchedPrimary(
    name: string,
    peer: string | undefined,
    peerInstance?: (primary: TestInstance) => Promise<TestInstance>,
  ) {
    const primary = await bed.start(name, { role: 'primary' });
    const answering = await peerInstance?.(primary);
    let connections = 0;
    const api = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    apis.push(api);
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const address = api.address();
    if (address === null || typeof address === 'string') throw new Error('no API listener port');
    const hosts = join(bed.root, `${name}-hosts`);
    const peerLine = peer ? `${peer} peers.test\n` : '';
    writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.1 kubernetes.default.svc\n${peerLine}`, {
      mode: 0o644,
    });
    const watcher = await bed.runEntrypoint(
      name,
      {
        role: 'primary',
        hosts,
        env: {
          PG_PEERS_HOST: 'peers.test',
          PG_SELF_FENCE_MS: '1000',
          KUBERNETES_SERVICE_HOST: '127.0.0.1',
          KUBERNETES_SERVICE_PORT: String(address.port),
          ...(answering ? { PGPORT: String(answering.port) } : {}),
        },
      },
      ['self-fence'],
    );
    const watching = { timeoutMs: 20_000, intervalMs: 100, abort: watcher.exited.then(() => 'it exited') };
    await waitUntil('the watcher connects to the API server', async () => connections >= 2, watching);
    expect(primary.isRunning()).toBe(true);
    /** The cut: the API server no longer answers; the DNS still does. */
    const cut = () => new Promise<void>((resolve) => api.close(() => resolve()));
    return { primary, watching, cut, connections: () => connections, hosts };
  }

  it('stops itself once the API server and its peer stop answering, whatever the DNS says', async () => {
    // The peer: an address of the loopback network where nothing listens (the primary listens on 127.0.0.1).
    const { primary, watching, cut } = await watchedPrimary('solo', '127.0.0.3');
    await cut();
    await waitUntil('the cut-off primary stops', async () => !primary.isRunning(), watching);
    expect(existsSync(join(bed.root, 'solo', 'run', 'self-fenced'))).toBe(true);
    expect(bed.entrypointLog('solo')).toContainEqual(
      expect.stringContaining('self-fence: this primary has reached neither'),
    );
  });

  it('stops itself though the lookup of its peers failed as the cut began: a failed lookup forgets no peer', async () => {
    const { primary, watching, cut, hosts } = await watchedPrimary('forgetful', '127.0.0.3');
    // The cut lands between the watcher's two lookups: the cluster DNS still answered, the
    // headless Service's name no longer does (the same file, rewritten in place: it is bind-mounted).
    writeFileSync(hosts, '127.0.0.1 localhost\n127.0.0.1 kubernetes.default.svc\n');
    await sleep(1000);
    await cut();
    await waitUntil('the cut-off primary stops', async () => !primary.isRunning(), watching);
    expect(existsSync(join(bed.root, 'forgetful', 'run', 'self-fenced'))).toBe(true);
  });

  it('keeps a primary that knows no other instance running: no failover could replace it', async () => {
    const { primary, cut } = await watchedPrimary('lone', undefined);
    await cut();
    // Four times the fence's delay: the watcher has long decided by then.
    await sleep(4000);
    expect(primary.isRunning()).toBe(true);
    expect(existsSync(join(bed.root, 'lone', 'run', 'self-fenced'))).toBe(false);
    expect(bed.entrypointLog('lone')).toContainEqual(
      expect.stringContaining('no other instance is known that could take over'),
    );
  });

  it('leaves the API server alone while a peer answers, and asks it again once none does', async () => {
    // The peer: a real replica, listening also on 127.0.0.2 (the primary's address is 127.0.0.1).
    const { primary, watching, connections, cut } = await watchedPrimary('quiet', '127.0.0.2', (upstream) =>
      bed.start('quiet-1', {
        role: 'replica',
        primary: upstream,
        env: { PG_LISTEN_ADDRESSES: '127.0.0.1,127.0.0.2' },
      }),
    );
    const peer = bed.instances.get('quiet-1');
    if (!peer) throw new Error('no peer');
    // The first checks ask the API server: the peer is known from the DNS after the first, and
    // answers from the second. Then a dozen checks (3 s) while it answers: none.
    await sleep(1000);
    const settled = connections();
    await sleep(3000);
    expect(connections() - settled).toBe(0);
    // The peer goes: the API server is asked again, answers, and the primary keeps running.
    await peer.stopFast();
    await waitUntil('the watcher asks the API server again', async () => connections() > settled, watching);
    await sleep(3000);
    expect(primary.isRunning()).toBe(true);
    expect(existsSync(join(bed.root, 'quiet', 'run', 'self-fenced'))).toBe(false);
    // And once the API server goes too, it is cut off: it stops as before.
    await cut();
    await waitUntil('the cut-off primary stops', async () => !primary.isRunning(), watching);
    expect(existsSync(join(bed.root, 'quiet', 'run', 'self-fenced'))).toBe(true);
  }, 60_000);
});

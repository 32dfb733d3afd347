// The launcher's iptables housekeeping on real iptables, in a network namespace of the test's
// own: it starts with no table at all, as a fresh machine does before the cluster's first `up`.
// The launcher's functions run inside it in a child node process (`ip netns exec`), so they run
// the same `iptables-save`/`iptables` commands `up` and `down` run on the machine.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mountPointsNow } from './host-leftovers.ts';
import { iptablesFamilies, iptablesChanges } from './iptables-snapshot.ts';
import { run, tryRun } from './run-command.ts';

type Family = (typeof iptablesFamilies)[number];

const namespaces: string[] = [];

async function freshNamespace(): Promise<string> {
  const name = `homeostat-test-${randomBytes(4).toString('hex')}`;
  await run('ip', ['netns', 'add', name]);
  namespaces.push(name);
  return name;
}

afterEach(async () => {
  for (const name of namespaces.splice(0)) await tryRun('ip', ['netns', 'delete', name]);
});

// `ip netns add` makes /run/netns (creating it when absent) a mount point of its own, which
// `ip netns delete` leaves: the test puts the machine back as it found it, or a teardown that
// later finds the directory busy (the local cluster's, say) blames itself.
const netnsDir = '/run/netns';
const netnsDirState = () => ({
  exists: existsSync(netnsDir),
  mountPoint: mountPointsNow().includes(netnsDir),
});
let netnsDirBefore: ReturnType<typeof netnsDirState>;
beforeAll(() => {
  netnsDirBefore = netnsDirState();
});
afterAll(async () => {
  if (!netnsDirBefore.mountPoint && netnsDirState().mountPoint) await run('umount', [netnsDir]);
  if (!netnsDirBefore.exists && existsSync(netnsDir) && readdirSync(netnsDir).length === 0)
    rmdirSync(netnsDir);
  expect(netnsDirState(), `${netnsDir} as the test found it`).toEqual(netnsDirBefore);
});

/** Calls one of the launcher's exported functions inside `namespace` and returns its result. */
async function inNamespace<T>(namespace: string, file: string, fn: string): Promise<T> {
  const url = new URL(file, import.meta.url).href;
  const script = `const m = await import(${JSON.stringify(url)}); console.log(JSON.stringify((await m.${fn}()) ?? null));`;
  const out = await run('ip', [
    'netns',
    'exec',
    namespace,
    process.execPath,
    '--input-type=module',
    '-e',
    script,
  ]);
  return JSON.parse(out) as T;
}

const snapshot = (namespace: string) =>
  inNamespace<string[]>(namespace, './iptables-snapshot.ts', 'iptablesSnapshot');

async function iptables(namespace: string, family: Family, ...args: string[]): Promise<void> {
  await run('ip', ['netns', 'exec', namespace, family, ...args]);
}

/**
 * Chains and rules of the kind the kubelet, kube-proxy, kube-router (both families) and the bridge
 * CNI plugin write, loaded the way kube-proxy loads them (`iptables-restore --noflush`), in filter, nat and
 * mangle, with jumps from built-in chains and a quoted comment like the CNI plugin's.
 */
function clusterRules(family: Family): string {
  const pod = family === 'iptables' ? '10.244.0.5/32' : 'fd00:10:244::5/128';
  return [
    '*filter',
    ':KUBE-FIREWALL - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-KUBELET-CANARY - [0:0]',
    ':KUBE-ROUTER-FORWARD - [0:0]',
    ':HOMEOSTAT-EGRESS - [0:0]',
    '-A INPUT -j KUBE-FIREWALL',
    '-A OUTPUT -j KUBE-FIREWALL',
    '-A FORWARD -m comment --comment "kube-router netpol" -j KUBE-ROUTER-FORWARD',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    // The iptables egress guard of clusters brought up before it moved to nftables.
    '-A FORWARD -i homeostat0 -m comment --comment "homeostat: pods stay on this machine" -j HOMEOSTAT-EGRESS',
    '-A KUBE-FORWARD -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-ROUTER-FORWARD -m mark --mark 0x20000/0x20000 -j ACCEPT',
    '-A HOMEOSTAT-EGRESS -o homeostat0 -j RETURN',
    'COMMIT',
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ':CNI-0123456789abcdef01234567 - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    `-A POSTROUTING -s ${pod} -m comment --comment "name: \\"homeostat\\" id: \\"0123\\"" -j CNI-0123456789abcdef01234567`,
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    'COMMIT',
    '*mangle',
    ':KUBE-IPTABLES-HINT - [0:0]',
    ':KUBE-KUBELET-CANARY - [0:0]',
    'COMMIT',
    '',
  ].join('\n');
}

/** What the cluster's components do to iptables. */
async function addClusterChains(namespace: string): Promise<void> {
  for (const family of iptablesFamilies) {
    await run('ip', ['netns', 'exec', namespace, `${family}-restore`, '--noflush'], {
      input: clusterRules(family),
    });
  }
}

const removeClusterChains = (namespace: string) =>
  inNamespace(namespace, './iptables-chains.ts', 'removeClusterChains');

// Network namespaces need root, as the local cluster itself does; CI runs as root.
const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('iptables leftovers, judged in a fresh network namespace (as root)', () => {
  it('finds nothing left after a clean teardown, though the tables the cluster used stay', async () => {
    const namespace = await freshNamespace();
    const before = await snapshot(namespace);
    expect(before, 'a fresh namespace has no iptables table yet').toEqual([]);

    await addClusterChains(namespace);
    const during = await snapshot(namespace);
    for (const table of ['*filter', '*nat', '*mangle']) {
      expect(during).toContain(`iptables ${table}`);
      expect(during).toContain(`ip6tables ${table}`);
    }
    expect(iptablesChanges(before, during).added).toContain(
      'iptables filter -A FORWARD -i homeostat0 -m comment --comment "homeostat: pods stay on this machine" -j HOMEOSTAT-EGRESS',
    );

    await removeClusterChains(namespace);
    const after = await snapshot(namespace);
    // The kernel keeps the tables, empty, with their built-in chains: what a fresh machine shows
    // after `down`, and no change to report.
    expect(after).toContain('iptables *mangle');
    expect(after).toContain('ip6tables :PREROUTING ACCEPT');
    expect(after.filter((l) => /KUBE-|CNI-|HOMEOSTAT-/.test(l))).toEqual([]);
    expect(iptablesChanges(before, after)).toEqual({ added: [], removed: [] });
  });

  it("reports the cluster's chain and rule left behind, a changed policy and a removed rule, and keeps others' rules", async () => {
    const namespace = await freshNamespace();
    // Someone else's chain and rule, there before the cluster.
    await iptables(namespace, 'iptables', '-N', 'SSH-GUARD');
    await iptables(namespace, 'iptables', '-A', 'INPUT', '-p', 'tcp', '--dport', '22', '-j', 'SSH-GUARD');
    await iptables(namespace, 'iptables', '-A', 'INPUT', '-p', 'udp', '--dport', '53', '-j', 'ACCEPT');
    const before = await snapshot(namespace);

    await addClusterChains(namespace);
    await removeClusterChains(namespace);
    const cleaned = await snapshot(namespace);
    expect(iptablesChanges(before, cleaned), "removing the cluster's chains touched nothing else").toEqual({
      added: [],
      removed: [],
    });

    // A chain and a jump to it that a component wrote after the removal, a policy changed, and a
    // rule of someone else's gone.
    await iptables(namespace, 'iptables', '-t', 'nat', '-N', 'KUBE-LEFTOVER');
    await iptables(namespace, 'iptables', '-t', 'nat', '-A', 'PREROUTING', '-j', 'KUBE-LEFTOVER');
    await iptables(namespace, 'ip6tables', '-P', 'FORWARD', 'DROP');
    await iptables(namespace, 'iptables', '-D', 'INPUT', '-p', 'udp', '--dport', '53', '-j', 'ACCEPT');
    const changes = iptablesChanges(before, await snapshot(namespace));
    expect(changes.added.sort()).toEqual(
      [
        'iptables nat :KUBE-LEFTOVER -',
        'iptables nat -A PREROUTING -j KUBE-LEFTOVER',
        'ip6tables filter :FORWARD DROP',
      ].sort(),
    );
    expect(changes.removed).toEqual(['iptables filter -A INPUT -p udp -m udp --dport 53 -j ACCEPT']);
  });

  it('keeps the egress guard as one nftables table, replaced in place, and removes it', async () => {
    const namespace = await freshNamespace();
    await inNamespace(namespace, './egress-guard.ts', 'ensureEgressGuard');
    await inNamespace(namespace, './egress-guard.ts', 'ensureEgressGuard');
    const ruleset = await run('ip', ['netns', 'exec', namespace, 'nft', 'list', 'ruleset']);
    expect(ruleset.match(/^table /gm), 'one table after two ensures').toEqual(['table ']);
    expect(ruleset).toContain('iifname "homeostat0" oifname != "homeostat0"');
    expect(await inNamespace(namespace, './egress-guard.ts', 'egressGuardPresent')).toBe(true);

    await inNamespace(namespace, './egress-guard.ts', 'removeEgressGuard');
    expect(await inNamespace(namespace, './egress-guard.ts', 'egressGuardPresent')).toBe(false);
    expect(await run('ip', ['netns', 'exec', namespace, 'nft', 'list', 'ruleset'])).toBe('');
  });

  it("destroys kube-router's ipsets and keeps everyone else's", async () => {
    const namespace = await freshNamespace();
    const ipset = (...args: string[]) => run('ip', ['netns', 'exec', namespace, 'ipset', ...args]);
    await ipset('create', 'KUBE-SRC-ABCDEFGHIJKLMNOP', 'hash:ip');
    await ipset('create', 'inet6:KUBE-DST-ABCDEFGHIJKLMNOP', 'hash:ip', 'family', 'inet6');
    await ipset('create', 'SSH-BLOCKLIST', 'hash:ip');
    await inNamespace(namespace, './kube-router-ipsets.ts', 'removeKubeRouterIpsets');
    expect((await ipset('list', '-name')).trim().split('\n')).toEqual(['SSH-BLOCKLIST']);
  });
});

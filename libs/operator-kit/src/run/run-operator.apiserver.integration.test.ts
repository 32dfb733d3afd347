// An operator process started the way its image starts it (node main.ts with flags and the
// chart's environment), against a real kube-apiserver + etcd: it logs "starting" as JSON, takes
// the Lease under its pod name, stops on SIGTERM with exit code 0, and exits 2 on a bad configuration.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig, sharedKubeconfigPath } from '@homeostat/testing/shared';
import { builtin, KubeClient } from '@homeostat/reconcile';

const main = fileURLToPath(new URL('../test-support/widget-main.ts', import.meta.url));
const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'test-admin' });

interface Run {
  output: () => string;
  errors: () => string;
  exited: Promise<number | null>;
  signal: (s: NodeJS.Signals) => void;
}

function start(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [main, ...args], {
    env: { PATH: process.env['PATH'] ?? '', KUBECONFIG: sharedKubeconfigPath(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return {
    output: () => stdout,
    errors: () => stderr,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    signal: (s) => child.kill(s),
  };
}

const logLines = (run: Run) =>
  run
    .output()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('runOperator (a whole operator process)', () => {
  afterAll(() => client.close());

  it('starts with the settings it read, leads under its pod name, and stops cleanly on SIGTERM', async () => {
    const namespace = `run-operator-${process.pid}`;
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    const run = start(['--health-port=0', '--metrics-port=0', '--lease-name=widgets'], {
      POD_NAMESPACE: namespace,
      POD_NAME: 'widget-operator-0',
      WATCH_NAMESPACES: 'a,b',
      WIDGET_IMAGE: 'registry.test/widget:2',
    });
    try {
      await waitUntil(
        'the Lease is held',
        async () => {
          const lease = await client.find(builtin.leases, 'widgets', namespace);
          return lease?.spec?.holderIdentity === 'widget-operator-0';
        },
        { timeoutMs: 30_000, describe: () => `the operator printed:\n${run.output()}${run.errors()}` },
      );
      const starting = logLines(run).find((l) => l['msg'] === 'starting');
      expect(starting).toMatchObject({
        name: 'widget-operator',
        watchNamespaces: ['a', 'b'],
        leaderElection: { namespace, leaseName: 'widgets' },
        widgetImage: 'registry.test/widget:2',
      });
    } finally {
      run.signal('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(logLines(run).some((l) => l['msg'] === 'signal received' && l['signal'] === 'SIGTERM')).toBe(true);
  });

  it('ends once stopped on SIGTERM, though something it built still holds the event loop', async () => {
    // As an etcd client's channel or an S3 client's keep-alive socket does: before, the process
    // logged "stopped" and lived on until the kubelet killed it at the end of the grace period.
    const run = start(['--leader-elect=false', '--health-port=0', '--metrics-port=0'], {
      WIDGET_HOLDS_HANDLE: '1',
    });
    try {
      await waitUntil('started', () => Promise.resolve(run.output().includes('"caches synced"')), {
        timeoutMs: 30_000,
        describe: () => `the operator printed:\n${run.output()}${run.errors()}`,
      });
    } finally {
      run.signal('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(logLines(run).some((l) => l['msg'] === 'stopped')).toBe(true);
  });

  it('ends with exit code 1 once it lost the lease, though something it built still holds the event loop', async () => {
    // A replica that lost the lease stops its controllers; the pod must restart to compete again,
    // not stay Running with nothing running until a liveness probe notices.
    const namespace = `run-operator-lost-${process.pid}`;
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
    const run = start(['--health-port=0', '--metrics-port=0', '--lease-name=widgets'], {
      POD_NAMESPACE: namespace,
      POD_NAME: 'widget-operator-0',
      WIDGET_HOLDS_HANDLE: '1',
    });
    try {
      await waitUntil(
        'the Lease is held',
        async () =>
          (await client.find(builtin.leases, 'widgets', namespace))?.spec?.holderIdentity ===
          'widget-operator-0',
        { timeoutMs: 30_000, describe: () => `the operator printed:\n${run.output()}${run.errors()}` },
      );
      // Another replica's claim, as after a partition: the holder's renewals fail until its
      // renew deadline passes, and then it steps down.
      const lease = await client.get(builtin.leases, 'widgets', namespace);
      await client.replace(builtin.leases, {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'widget-operator-1',
          leaseDurationSeconds: 300,
        },
      });
      expect(await run.exited).toBe(1);
    } finally {
      run.signal('SIGKILL');
    }
    expect(logLines(run).some((l) => l['msg'] === 'stopped')).toBe(true);
  });

  it('exits 2 with the message and the usage on a bad flag, before touching the cluster', async () => {
    const run = start(['--leader-elect=false', '--widget-image=']);
    expect(await run.exited).toBe(2);
    expect(run.errors()).toMatch(/^widget-operator: --widget-image must not be empty/);
    const unknown = start(['--frobnicate']);
    expect(await unknown.exited).toBe(2);
    expect(unknown.errors()).toContain("widget-operator: Unknown option '--frobnicate'");
    expect(unknown.errors()).toContain('--widget-image ref');
  });

  it('exits 2 when building the operator finds the configuration unusable', async () => {
    const run = start(['--leader-elect=false'], { WIDGET_BUILD_FAILS: '1' });
    expect(await run.exited).toBe(2);
    expect(run.errors()).toContain('widget-operator: the widget schedule is not a cron expression');
  });
});

// The stand-in kubelet's pod lifecycle against an API held in memory and real `sh` processes: what
// it starts, restarts and stops, and the status it writes as it does.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startProcess } from './managed-process.ts';
import {
  ContainerFailure,
  ProcessKubelet,
  type KubeletApi,
  type PodRuntime,
  type Sandbox,
} from './process-kubelet.ts';
import { waitUntil } from './readiness.ts';

function pod(name: string, uid: string, image = 'app:1', labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, uid, labels },
    spec: { containers: [{ name: 'main', image }] },
  };
}

class MemoryApi implements KubeletApi {
  readonly pods = new Map<string, V1Pod>();
  readonly statuses = new Map<string, V1PodStatus>();
  listPods(): Promise<V1Pod[]> {
    return Promise.resolve([...this.pods.values()]);
  }
  listClaims(): Promise<[]> {
    return Promise.resolve([]);
  }
  findSecret(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  patchPodStatus(name: string, status: V1PodStatus): Promise<void> {
    this.statuses.set(name, status);
    return Promise.resolve();
  }
  releaseClaim(): Promise<void> {
    return Promise.resolve();
  }
  main(name: string) {
    return this.statuses.get(name)?.containerStatuses?.[0];
  }
}

let workDir: string;
let api: MemoryApi;
let kubelet: ProcessKubelet | undefined;
/** Images whose start fails, as an entrypoint that exits at once with a message. */
const failing = new Set<string>();
const starts: string[] = [];
/** The pod's `note` annotation each container start was given. */
const notes: (string | undefined)[] = [];
const runs: string[] = [];

const runtime: PodRuntime = {
  runsToCompletion: (p) => p.metadata?.labels?.['job'] !== undefined,
  createSandbox: (p): Promise<Sandbox> =>
    Promise.resolve({
      startContainer: (image, current) => {
        const name = p.metadata?.name ?? '';
        starts.push(`${name}@${image}`);
        notes.push(current.metadata?.annotations?.['note']);
        if (failing.has(image)) return Promise.reject(new ContainerFailure(3, `${image} cannot start`));
        const process = startProcess({
          name,
          command: 'sh',
          args: ['-c', 'sleep 60'],
          logFile: join(workDir, `${name}.log`),
        });
        return Promise.resolve({ process, ready: () => Promise.resolve(process.isRunning()) });
      },
    }),
  run: (p) => {
    runs.push(p.metadata?.name ?? '');
    const exitCode = p.metadata?.labels?.['job'] === 'fail' ? 2 : 0;
    return Promise.resolve({
      completion: Promise.resolve({ exitCode, message: `ended with ${exitCode}` }),
      stop: () => Promise.resolve(),
    });
  },
};

function startKubelet(crashBackoffMs = 0): ProcessKubelet {
  kubelet = new ProcessKubelet({ api, runtime, selectors: ['any'], workDir, crashBackoffMs, intervalMs: 50 });
  kubelet.start();
  return kubelet;
}

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'process-kubelet-'));
  api = new MemoryApi();
  failing.clear();
  starts.length = 0;
  notes.length = 0;
  runs.length = 0;
});

afterEach(async () => {
  await kubelet?.stop();
  kubelet = undefined;
  await rm(workDir, { recursive: true, force: true });
});

const waitFor = (what: string, check: () => boolean) =>
  waitUntil(what, () => Promise.resolve(check()), { timeoutMs: 10_000, intervalMs: 20 });

describe('ProcessKubelet', () => {
  it('runs a pod, restarts its container when it exits or its image changes, and stops it with the pod', async () => {
    api.pods.set('a', pod('a', 'uid-a'));
    const node = startKubelet();
    await waitFor('a Ready', () => api.statuses.get('a')?.conditions?.[0]?.status === 'True');
    expect(api.main('a')).toMatchObject({ name: 'main', image: 'app:1', ready: true, restartCount: 0 });

    await node.crash('a');
    await waitFor('a restarted', () => api.main('a')?.restartCount === 1 && api.main('a')?.ready === true);
    expect(api.main('a')?.lastState?.terminated?.reason).toBe('Error');

    api.pods.set('a', pod('a', 'uid-a', 'app:2'));
    await waitFor('a on app:2', () => api.main('a')?.image === 'app:2' && api.main('a')?.ready === true);
    expect(api.main('a')?.restartCount).toBe(2);
    expect(starts).toEqual(['a@app:1', 'a@app:1', 'a@app:2']);

    api.pods.delete('a');
    await waitFor('a stopped', () => node.runningPods().length === 0);
  });

  it('starts a restarted container with the pod as it is now, as a downward API volume shows it', async () => {
    const first = pod('c', 'uid-c');
    api.pods.set('c', { ...first, metadata: { ...first.metadata, annotations: { note: 'before' } } });
    const node = startKubelet();
    await waitFor('c Ready', () => api.main('c')?.ready === true);
    api.pods.set('c', { ...first, metadata: { ...first.metadata, annotations: { note: 'after' } } });
    await node.crash('c');
    await waitFor('c restarted', () => api.main('c')?.restartCount === 1 && api.main('c')?.ready === true);
    expect(notes).toEqual(['before', 'after']);
  });

  it('reports a failed start as the kubelet does and backs off before the next', async () => {
    failing.add('broken:1');
    api.pods.set('b', pod('b', 'uid-b', 'broken:1'));
    startKubelet(300);
    await waitFor('two failed starts', () => (api.main('b')?.restartCount ?? 0) >= 2);
    expect(api.main('b')).toMatchObject({
      ready: false,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 3, message: 'broken:1 cannot start' } },
    });
    // The back-off keeps the starts apart: with a 50 ms sync, no back-off would make many more.
    expect(starts.length).toBeLessThanOrEqual(3);
  });

  it('runs a run-to-completion pod once and writes how it ended', async () => {
    api.pods.set('ok', pod('ok', 'uid-ok', 'job:1', { job: 'ok' }));
    api.pods.set('bad', pod('bad', 'uid-bad', 'job:1', { job: 'fail' }));
    startKubelet();
    await waitFor('both ended', () => api.statuses.has('ok') && api.statuses.has('bad'));
    expect(api.statuses.get('ok')?.phase).toBe('Succeeded');
    expect(api.statuses.get('bad')).toMatchObject({
      phase: 'Failed',
      containerStatuses: [{ state: { terminated: { exitCode: 2, message: 'ended with 2' } } }],
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runs.sort()).toEqual(['bad', 'ok']);
  });

  it('stops the pod of a node that went down and starts none of that name again', async () => {
    api.pods.set('c', pod('c', 'uid-c1'));
    const node = startKubelet();
    await waitFor('c Ready', () => api.main('c')?.ready === true);
    node.stopNode('c');
    await waitFor('c stopped', () => node.runningPods().length === 0);
    api.pods.set('c', pod('c', 'uid-c2'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A node that went down starts no pod of that name again.
    expect(starts).toEqual(['c@app:1']);
  });
});

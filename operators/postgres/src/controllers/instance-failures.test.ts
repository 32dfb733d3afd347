import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { describeFailures, instanceFailures } from './instance-failures.ts';

const pod = (status: Partial<V1ContainerStatus>): V1Pod => ({
  status: {
    containerStatuses: [
      { name: 'self-fence', image: 'x', imageID: '', ready: true, restartCount: 0 },
      { name: 'postgres', image: 'x', imageID: '', ready: false, restartCount: 1, ...status },
    ],
  },
});
const crashed = (exitCode: number, message?: string) => ({
  state: { waiting: { reason: 'CrashLoopBackOff' } },
  lastState: { terminated: { exitCode, reason: 'Error', ...(message ? { message } : {}) } },
});

describe('instanceFailures', () => {
  it('names an instance whose container the kubelet cannot start, with the kubelet’s reason', () => {
    const failures = instanceFailures(
      new Map([
        [
          'pg-0',
          pod({
            state: {
              waiting: {
                reason: 'CreateContainerConfigError',
                message: 'secret "backup-bucket" not found',
              },
            },
          }),
        ],
        ['pg-1', pod({ state: { waiting: { reason: 'ContainerCreating' } } })],
      ]),
    );
    expect(failures).toEqual([
      {
        instance: 'pg-0',
        cause:
          'the postgres container cannot start (CreateContainerConfigError): secret "backup-bucket" not found',
      },
    ]);
  });

  it('names each instance whose postgres container is down after failing, with its termination message', () => {
    const failures = instanceFailures(
      new Map([
        ['pg-1', pod(crashed(1))],
        ['pg-0', pod(crashed(1, 'bootstrap SQL failed: FATAL:  role "x" already exists\n'))],
        ['pg-2', pod({ ready: true, state: { running: {} } })],
      ]),
    );
    expect(failures).toEqual([
      { instance: 'pg-0', cause: 'bootstrap SQL failed: FATAL:  role "x" already exists' },
      { instance: 'pg-1', cause: 'the postgres container exited with code 1 (Error)' },
    ]);
    expect(describeFailures(failures)).toBe(
      'pg-0: bootstrap SQL failed: FATAL:  role "x" already exists; pg-1: the postgres container exited with code 1 (Error)',
    );
  });

  it('does not count a container running again, a clean exit, or a pod the kubelet has not reported', () => {
    expect(
      instanceFailures(
        new Map([
          ['pg-0', pod({ ...crashed(137), state: { running: {} } })],
          ['pg-1', pod({ state: { terminated: { exitCode: 0 } } })],
          ['pg-2', {}],
        ]),
      ),
    ).toEqual([]);
  });

  it('keeps a long message to 1024 characters', () => {
    const [failure] = instanceFailures(new Map([['pg-0', pod(crashed(1, 'x'.repeat(5000)))]]));
    expect(failure?.cause).toHaveLength(1024);
  });
});

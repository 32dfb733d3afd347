import { describe, expect, it } from 'vitest';
import { parseArguments } from '../arguments.ts';
import { fencedPodAnnotation } from '../fence-request.ts';
import { UsageError } from '../kinds.ts';
import type { Pod } from '../pods.ts';
import { fence, fenceProgress, unfenceProgress } from './fence.ts';

interface PodState {
  fenced?: boolean;
  ready?: boolean;
  going?: boolean;
}
const pod = (name: string, { fenced = false, ready = true, going = false }: PodState = {}): Pod => ({
  metadata: {
    name,
    annotations: fenced ? { [fencedPodAnnotation]: 'true' } : {},
    ...(going ? { deletionTimestamp: '2026-11-28T01:40:05Z' } : {}),
  },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const cluster = (available: string) => ({
  metadata: { name: 'accounts' },
  status: { conditions: [{ type: 'Available', status: available }] },
});
const fenced = { fenced: true, ready: false };

describe('fence and unfence (the arguments)', () => {
  it('take CLUSTER and instances, or CLUSTER --all, with --no-wait and --timeout', () => {
    const named = parseArguments(['fence', 'accounts', 'accounts-1', 'accounts-2', '--timeout', '2m']);
    expect([named.command, named.positional, named.options.get('timeout')]).toEqual([
      'fence',
      ['accounts', 'accounts-1', 'accounts-2'],
      '2m',
    ]);
    const all = parseArguments(['unfence', 'accounts', '--all', '--no-wait']);
    expect([all.positional, all.options.has('all'), all.options.has('no-wait')]).toEqual([
      ['accounts'],
      true,
      true,
    ]);
  });

  it('refuse neither instances nor --all, and both, before reading anything', async () => {
    const target = { flags: ['--kubeconfig=/nonexistent'], namespace: undefined };
    for (const given of [
      { cluster: 'accounts', instances: [], all: false },
      { cluster: 'accounts', instances: ['accounts-1'], all: true },
      { cluster: undefined, instances: [], all: true },
    ])
      await expect(fence(target, 'unfence', given, undefined)).rejects.toThrow(
        new UsageError('unfence takes CLUSTER INSTANCE... or CLUSTER --all'),
      );
  });
});

describe('fenceProgress (when a fence holds)', () => {
  it('is done when each pod is made fenced, is staying and is not Ready; other pods do not matter', () => {
    expect(fenceProgress(['accounts-1'], [pod('accounts-0'), pod('accounts-1', fenced)])).toBe(true);
  });

  it('names the instances without a pod, not fenced yet, being replaced and still Ready', () => {
    expect(
      fenceProgress(
        ['accounts-0', 'accounts-1', 'accounts-2', 'accounts-3', 'accounts-4'],
        [
          pod('accounts-0', fenced),
          pod('accounts-1'),
          pod('accounts-2', { fenced: true, ready: false, going: true }),
          pod('accounts-3', { fenced: true, ready: true }),
        ],
      ),
    ).toBe(
      'no pod: accounts-4; not fenced yet: accounts-1; being replaced: accounts-2; still Ready: accounts-1, accounts-3',
    );
  });
});

describe('unfenceProgress (when an instance is back)', () => {
  it('is done when each pod is made unfenced, is staying and is Ready, and the cluster is Available', () => {
    expect(
      unfenceProgress(['accounts-1'], cluster('True'), [pod('accounts-0', fenced), pod('accounts-1')]),
    ).toBe(true);
  });

  it('names the instances without a pod, still fenced, being replaced and not Ready, and waits for Available', () => {
    expect(
      unfenceProgress(['accounts-0', 'accounts-1', 'accounts-2', 'accounts-3'], cluster('False'), [
        pod('accounts-0', fenced),
        pod('accounts-1', { going: true }),
        pod('accounts-2', { ready: false }),
      ]),
    ).toBe(
      'no pod: accounts-3; still fenced: accounts-0; being replaced: accounts-1; not Ready: accounts-0, accounts-2; Available False',
    );
    expect(unfenceProgress(['accounts-1'], { metadata: { name: 'accounts' } }, [pod('accounts-1')])).toBe(
      'Available unknown',
    );
  });
});

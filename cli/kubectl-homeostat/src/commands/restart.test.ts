import { describe, expect, it } from 'vitest';
import { restartedAtAnnotation as libraryKey } from '../../../../libs/operator-kit/src/restart/restart-request.ts';
import { parseArguments } from '../arguments.ts';
import { kindNamed, type HomeostatKind } from '../kinds.ts';
import { podSelector, type Pod } from '../pods.ts';
import { restartedAtAnnotation, restartPatch, restartProgress } from './restart.ts';

const at = '2026-11-28T01:40:00.123Z';
const pod = (name: string, value: string | undefined, ready = true, going = false): Pod => ({
  metadata: {
    name,
    ...(value === undefined ? {} : { annotations: { [restartedAtAnnotation]: value } }),
    ...(going ? { deletionTimestamp: '2026-11-28T01:40:05Z' } : {}),
  },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const cluster = (available: string) => ({
  metadata: { name: 'c' },
  status: { conditions: [{ type: 'Available', status: available }] },
});
const kind = (alias: string): HomeostatKind => {
  const found = kindNamed(alias);
  if (!found) throw new Error(`no kind ${alias}`);
  return found;
};

describe('restart (the request)', () => {
  it('sets the annotation the operators read (the same key as libs/operator-kit)', () => {
    expect(restartedAtAnnotation).toBe(libraryKey);
    expect(restartPatch(at)).toEqual({ metadata: { annotations: { 'homeostat.dev/restartedAt': at } } });
  });

  it('takes [TYPE/]NAME, --no-wait and --timeout', () => {
    const { command, positional, options } = parseArguments([
      'restart',
      'mc/sessions',
      '--timeout',
      '2m',
      '--no-wait',
    ]);
    expect({ command, positional, timeout: options.get('timeout'), noWait: options.has('no-wait') }).toEqual({
      command: 'restart',
      positional: ['mc/sessions'],
      timeout: '2m',
      noWait: true,
    });
  });

  it("selects each kind's own pods by the labels its operator puts on them, nothing else of the resource", () => {
    expect(podSelector(kind('mc'), 'sessions')).toBe(
      'app.kubernetes.io/instance=sessions,app.kubernetes.io/managed-by=memcached-operator,app.kubernetes.io/component=cache',
    );
    expect(podSelector(kind('etcdc'), 'e')).toBe(
      'app.kubernetes.io/instance=e,app.kubernetes.io/managed-by=etcd-operator,app.kubernetes.io/component=member',
    );
    expect(podSelector(kind('pgc'), 'p')).toBe(
      'app.kubernetes.io/instance=p,app.kubernetes.io/managed-by=postgres-operator,app.kubernetes.io/component=database',
    );
    expect(kind('pgbackup').podLabels).toBeUndefined();
  });
});

describe('restartProgress (when a restart is over)', () => {
  it('is done when every pod carries the request and is Ready, and the resource is Available', () => {
    expect(restartProgress(at, cluster('True'), [pod('c-0', at), pod('c-1', at)])).toBe(true);
  });

  it('names the pods not restarted yet, the ones stopping and the ones not Ready', () => {
    expect(
      restartProgress(at, cluster('True'), [
        pod('c-0', at),
        pod('c-1', '2026-11-27T00:00:00Z'),
        pod('c-2', undefined),
        pod('c-3', at, false),
        pod('c-4', at, true, true),
      ]),
    ).toBe('not restarted yet: c-1, c-2; stopping: c-4; not Ready: c-3');
  });

  it('waits for Available, and for pods at all', () => {
    expect(restartProgress(at, cluster('False'), [pod('c-0', at)])).toBe('Available False');
    expect(restartProgress(at, { metadata: { name: 'c' } }, [pod('c-0', at)])).toBe('Available unknown');
    expect(restartProgress(at, cluster('True'), [])).toBe('no pods');
  });
});

import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../client/errors.ts';
import { controllerReference } from './owner-references.ts';
import {
  WriteFailure,
  assertOwnedOrAbsent,
  refusedWritesProblem,
  warnRefusedWrites,
} from './write-failure.ts';

const owner = {
  apiVersion: 'cache.homeostat.dev/v1',
  kind: 'Memcached',
  metadata: { name: 'c', uid: 'u-1' },
};

describe('WriteFailure', () => {
  it("names the step and gives the API server's message, not the request", () => {
    const refused = new KubeApiError('PATCH', '/apis/apps/v1/namespaces/n/deployments/c', 422, {
      message: 'Deployment.apps "c" is invalid: spec.replicas: must be non-negative',
    });
    const failure = new WriteFailure('Deployment c', refused);
    expect(failure.message).toBe(
      'Deployment c: Deployment.apps "c" is invalid: spec.replicas: must be non-negative',
    );
    expect(failure.cause).toBe(refused);
    expect(new WriteFailure('Service c', 'socket hang up').message).toBe('Service c: socket hang up');
  });

  it('refuses an object of the same name that the owner does not control', () => {
    const ours = { metadata: { name: 'c', ownerReferences: [controllerReference(owner)] } };
    const theirs = { metadata: { name: 'c' } };
    expect(() => assertOwnedOrAbsent(undefined, owner, 'Service')).not.toThrow();
    expect(() => assertOwnedOrAbsent(ours, owner, 'Service')).not.toThrow();
    let taken: unknown;
    try {
      assertOwnedOrAbsent(theirs, owner, 'Service');
    } catch (error) {
      taken = error;
    }
    expect(taken).toBeInstanceOf(WriteFailure);
    expect(taken).toMatchObject({
      reason: 'NameTaken',
      message:
        'Service c: an object of this name exists and is not controlled by this Memcached; rename or delete it',
    });
  });

  it('says ApplyFailed for a refused write, keeps the reason when repeated, and joins refusals for Degraded', () => {
    const quota = new WriteFailure('applying Service c', 'exceeded quota');
    expect(quota.reason).toBe('ApplyFailed');
    const taken = new WriteFailure('Secret c', 'taken', { reason: 'NameTaken' });
    expect(taken.repeat()).toMatchObject({ reason: 'NameTaken', repeated: true, message: taken.message });
    expect(refusedWritesProblem([])).toBeUndefined();
    expect(refusedWritesProblem([taken, quota])).toEqual({
      reason: 'NameTaken',
      message: 'Secret c: taken; applying Service c: exceeded quota',
    });
  });
});

describe('warnRefusedWrites', () => {
  it('warns once per new refusal: not for a repeated one, nor for one Degraded already names', async () => {
    const notes: string[] = [];
    const events = {
      warning: async (_regarding: unknown, reason: string, _action: string, note: string) => {
        notes.push(`${reason}: ${note}`);
      },
    };
    const quota = new WriteFailure('applying Service c', 'exceeded quota');
    const policy = new WriteFailure('applying PodDisruptionBudget c', 'denied by policy');
    const named = new WriteFailure('creating Secret c', 'forbidden');
    const taken = new WriteFailure('Service d', 'held by another', { reason: 'NameTaken' });
    await warnRefusedWrites(events, owner, [quota, policy.repeat(), named, taken], `${named.message}; other`);
    expect(notes).toEqual([
      'ApplyFailed: applying Service c: exceeded quota',
      'NameTaken: Service d: held by another',
    ]);
  });
});

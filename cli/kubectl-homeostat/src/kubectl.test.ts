import { describe, expect, it } from 'vitest';
import { isConflict, KubectlError, retryOnConflict, versionedPatch } from './kubectl.ts';

// What kubectl prints when a patch carrying a resourceVersion meets a newer object.
const conflict = () =>
  new KubectlError(
    ['patch'],
    1,
    'Error from server (Conflict): Operation cannot be fulfilled on postgresqlclusters.postgres.homeostat.dev "accounts": the object has been modified; please apply your changes to the latest version and try again\n',
  );

describe('writing on the version read', () => {
  it("puts the resourceVersion beside the patch's own metadata", () => {
    expect(
      versionedPatch('41', { metadata: { annotations: { a: null } }, spec: { primary: 'p-1' } }),
    ).toEqual({
      metadata: { annotations: { a: null }, resourceVersion: '41' },
      spec: { primary: 'p-1' },
    });
  });

  it("tells a conflict from kubectl's other failures", () => {
    expect(isConflict(conflict())).toBe(true);
    expect(isConflict(new KubectlError(['patch'], 1, 'Error from server (Forbidden): denied'))).toBe(false);
    expect(isConflict(new Error('the object has been modified'))).toBe(false);
  });

  it('tries again on a conflict, and only on one', async () => {
    let calls = 0;
    const twice = () => {
      calls++;
      return calls <= 2 ? Promise.reject(conflict()) : Promise.resolve('written');
    };
    await expect(retryOnConflict(5, twice)).resolves.toBe('written');
    expect(calls).toBe(3);

    calls = 0;
    const forbidden = () => {
      calls++;
      return Promise.reject(new KubectlError(['patch'], 1, 'Error from server (Forbidden): denied'));
    };
    await expect(retryOnConflict(5, forbidden)).rejects.toThrow('Forbidden');
    expect(calls).toBe(1);
  });

  it('gives up after the attempts it was given, saying why', async () => {
    let calls = 0;
    const always = () => {
      calls++;
      return Promise.reject(conflict());
    };
    await expect(retryOnConflict(3, always)).rejects.toThrow('3 conflicts in a row');
    expect(calls).toBe(3);
  });
});

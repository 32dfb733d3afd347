import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../client/errors.ts';
import { WriteFailure } from '../helpers/write-failure.ts';
import { WriteBackoff } from './write-backoff.ts';

const quota = new KubeApiError('POST', '/api/v1/namespaces/n/persistentvolumeclaims', 403, {
  message: 'persistentvolumeclaims "db-3" is forbidden: exceeded quota: claims',
});

/** A backoff on a clock the test moves, and a count of the writes actually sent. */
function setup() {
  let now = 0;
  const backoff = new WriteBackoff({ baseMs: 100, maxMs: 1000, now: () => now });
  let sent = 0;
  const heard: number[] = [];
  const refused = () => {
    sent++;
    return Promise.reject(quota);
  };
  const reconcile = async (generation = 1, what = 'creating PersistentVolumeClaim db-3') => {
    const writes = backoff.begin('n/db', generation, (_failure, retryInMs) => heard.push(retryInMs));
    const error = await writes.step(what, refused).catch((e: unknown) => e);
    writes.finish();
    return error as WriteFailure;
  };
  return {
    backoff,
    reconcile,
    sent: () => sent,
    heard,
    advance: (ms: number) => (now += ms),
  };
}

describe('WriteBackoff', () => {
  it('sends a refused write again only when its own backoff, doubling, has passed', async () => {
    const t = setup();
    const first = await t.reconcile();
    expect(first).toBeInstanceOf(WriteFailure);
    expect(first.message).toBe(
      'creating PersistentVolumeClaim db-3: persistentvolumeclaims "db-3" is forbidden: exceeded quota: claims',
    );
    expect(first.repeated).toBe(false);
    expect(t.backoff.nextDueMs('n/db')).toBe(100);

    t.advance(50);
    const skipped = await t.reconcile();
    expect(t.sent()).toBe(1); // not sent while it backs off
    expect(skipped.repeated).toBe(true);
    expect(skipped.message).toBe(first.message); // the status stays as it is
    expect(t.backoff.nextDueMs('n/db')).toBe(50);

    t.advance(50);
    await t.reconcile();
    expect(t.sent()).toBe(2);
    expect(t.backoff.nextDueMs('n/db')).toBe(200);
    t.advance(200);
    await t.reconcile();
    expect(t.backoff.nextDueMs('n/db')).toBe(400);
    t.advance(400);
    await t.reconcile();
    t.advance(800);
    await t.reconcile();
    expect(t.backoff.nextDueMs('n/db')).toBe(1000); // capped
    expect(t.sent()).toBe(5);
    expect(t.heard).toEqual([100, 200, 400, 800, 1000]); // each refusal told once, repeats not
  });

  it('reports a write not sent (a name taken) with its own reason, and looks again next reconcile', async () => {
    const backoff = new WriteBackoff({ now: () => 0 });
    let looked = 0;
    const taken = () => {
      looked++;
      throw new WriteFailure('Secret db-ca', 'held by another', { reason: 'NameTaken' });
    };
    for (let round = 0; round < 2; round++) {
      const writes = backoff.begin('n/db', 1);
      expect(await writes.attempt('making the TLS Secrets', taken)).toBeUndefined();
      expect(writes.failures).toMatchObject([
        { reason: 'NameTaken', message: 'Secret db-ca: held by another' },
      ]);
      writes.finish();
    }
    expect(looked).toBe(2);
    expect(backoff.nextDueMs('n/db')).toBeUndefined();
  });

  it('keeps the writes of a reconcile going past a refused one with attempt, listing each refusal', async () => {
    const backoff = new WriteBackoff({ now: () => 0 });
    const writes = backoff.begin('n/db', 1);
    expect(await writes.attempt('applying Service db', () => Promise.reject(quota))).toBeUndefined();
    expect(await writes.attempt('creating Pod db-0', () => Promise.resolve('made'))).toBe('made');
    expect(writes.failures.map((f) => f.step)).toEqual(['applying Service db']);
  });

  it('tries at once after a spec change, and forgets a write no longer asked for', async () => {
    const t = setup();
    await t.reconcile(1);
    await t.reconcile(2); // a new generation: sent although the backoff has not passed
    expect(t.sent()).toBe(2);
    const writes = t.backoff.begin('n/db', 2);
    writes.finish(); // the reconcile wants that write no more
    expect(t.backoff.nextDueMs('n/db')).toBeUndefined();
  });

  it('clears the backoff once the write goes through', async () => {
    const t = setup();
    await t.reconcile();
    t.advance(100);
    const writes = t.backoff.begin('n/db', 1);
    await writes.step('creating PersistentVolumeClaim db-3', () => Promise.resolve());
    writes.finish();
    expect(writes.failures).toEqual([]);
    expect(t.backoff.nextDueMs('n/db')).toBeUndefined();
  });
});

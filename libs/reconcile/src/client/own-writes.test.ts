import { describe, expect, it } from 'vitest';
import { OwnWrites } from './own-writes.ts';

const at = (resourceVersion: string) => ({ metadata: { resourceVersion } });

describe('OwnWrites', () => {
  it('holds a copy of any other version as possibly older until one of the written version is seen', () => {
    const writes = new OwnWrites();
    expect(writes.mayBeOlder('/a', at('1'))).toBe(false); // never written: the cache is all there is
    writes.record('/a', at('7'));
    expect(writes.mayBeOlder('/a', at('5'))).toBe(true);
    expect(writes.mayBeOlder('/a', at('7'))).toBe(false);
    expect(writes.size).toBe(0); // the wait is over once the cache showed the write
    expect(writes.mayBeOlder('/a', at('5'))).toBe(false);
  });

  it('keeps the last write of each object, and forgets a deleted one', () => {
    const writes = new OwnWrites();
    writes.record('/a', at('7'));
    writes.record('/a', at('9'));
    writes.record('/b', at('8'));
    expect(writes.mayBeOlder('/a', at('7'))).toBe(true);
    writes.forget('/b');
    expect(writes.mayBeOlder('/b', at('1'))).toBe(false);
    expect(writes.size).toBe(1);
  });

  it('trusts the cache again once a write is older than forgetAfterMs, and drops such writes as new ones come', () => {
    let now = 0;
    const writes = new OwnWrites({ forgetAfterMs: 1000, now: () => now });
    writes.record('/a', at('7'));
    writes.record('/b', at('8'));
    now = 500;
    writes.record('/c', at('9'));
    now = 1200;
    expect(writes.mayBeOlder('/a', at('5'))).toBe(false);
    writes.record('/d', at('10')); // /b expired too: only /c (written at 500) and /d are left
    expect(writes.size).toBe(2);
    expect(writes.mayBeOlder('/c', at('5'))).toBe(true);
  });

  it('remembers nothing for an answer without a resourceVersion', () => {
    const writes = new OwnWrites();
    writes.record('/a', undefined);
    writes.record('/b', { metadata: {} });
    expect(writes.size).toBe(0);
  });
});

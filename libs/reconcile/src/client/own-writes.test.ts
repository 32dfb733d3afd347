import { describe, expect, it } from 'vitest';
import { OwnWrites } from './own-writes.ts';

const at = (resourceVersion: string) => ({ metadata: { resourceVersion } });

describe('OwnWrites', () => {
  it('holds a copy of any other version as possibly older until one of the written version is seen', () => {
    const writes = new OwnWrites();
    expect(writes.mayBeOlder('a', at('1'))).toBe(false); // never written: the cache is all there is
    writes.sending('a');
    expect(writes.mayBeOlder('a', at('5'))).toBe(true); // in flight: it may already be written
    writes.answered('a', '7');
    expect(writes.mayBeOlder('a', at('5'))).toBe(true);
    expect(writes.mayBeOlder('a', at('7'))).toBe(false);
    expect(writes.size).toBe(0); // the wait is over once the cache showed the write
    expect(writes.mayBeOlder('a', at('5'))).toBe(false);
  });

  it('keeps waiting after an answer that did not carry the version, and after a lost answer', () => {
    const writes = new OwnWrites();
    writes.answered('a', undefined);
    writes.sending('b'); // aborted: no answer will come
    expect(writes.mayBeOlder('a', at('7'))).toBe(true);
    expect(writes.mayBeOlder('b', at('7'))).toBe(true);
  });

  it('settles on a copy an apply left unchanged, only if no other write of it came since', () => {
    const writes = new OwnWrites();
    writes.answered('a', '8');
    writes.settled('a', '8');
    expect(writes.size).toBe(0);
    writes.answered('b', '9');
    writes.settled('b', '8'); // another write (9) is still to be seen
    expect(writes.mayBeOlder('b', at('8'))).toBe(true);
  });

  it('keeps the last write of each object, and forgets a deleted one', () => {
    const writes = new OwnWrites();
    writes.answered('a', '7');
    writes.answered('a', '9');
    writes.answered('b', '8');
    expect(writes.mayBeOlder('a', at('7'))).toBe(true);
    writes.forget('b');
    expect(writes.mayBeOlder('b', at('1'))).toBe(false);
    expect(writes.size).toBe(1);
  });

  it('trusts the cache again once a write is older than forgetAfterMs, and drops such writes as new ones come', () => {
    let now = 0;
    const writes = new OwnWrites({ forgetAfterMs: 1000, now: () => now });
    writes.answered('a', '7');
    writes.answered('b', '8');
    now = 500;
    writes.answered('c', '9');
    now = 1200;
    expect(writes.mayBeOlder('a', at('5'))).toBe(false);
    writes.answered('d', '10'); // b expired too: only c (written at 500) and d are left
    expect(writes.size).toBe(2);
    expect(writes.mayBeOlder('c', at('5'))).toBe(true);
  });

  it('remembers at most maxRemembered writes, the oldest forgotten first', () => {
    const writes = new OwnWrites({ maxRemembered: 2 });
    writes.answered('a', '1');
    writes.answered('b', '2');
    writes.answered('a', '3'); // a is now the newest
    writes.answered('c', '4');
    expect(writes.size).toBe(2);
    expect(writes.mayBeOlder('b', at('0'))).toBe(false);
    expect(writes.mayBeOlder('a', at('0'))).toBe(true);
  });
});

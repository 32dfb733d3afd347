import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BackgroundWrites } from './background-writes.ts';

/** A write that runs until its test lets it finish. */
function heldWrite(log: string[], name: string): { write: () => Promise<void>; finish: () => void } {
  let finish: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (finish = resolve));
  return {
    write: async () => {
      log.push(`start ${name}`);
      await held;
      log.push(`end ${name}`);
    },
    finish: () => finish(),
  };
}

describe('BackgroundWrites', () => {
  it('runs at most `concurrency` writes at once, in the order they were added', async () => {
    const log: string[] = [];
    const writes = new BackgroundWrites({ concurrency: 2 });
    const held = ['a', 'b', 'c'].map((name) => heldWrite(log, name));
    for (const { write } of held) expect(writes.add(write)).toBe(true);
    expect(log).toEqual(['start a', 'start b']);
    expect(writes.pending).toBe(3);
    held[1]?.finish();
    await sleep(0);
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    held[0]?.finish();
    held[2]?.finish();
    expect(await writes.idle(1000)).toBe(true);
    expect(writes.pending).toBe(0);
  });

  it('drops a write added to a full backlog instead of making its caller wait', async () => {
    const log: string[] = [];
    const writes = new BackgroundWrites({ concurrency: 1, maxBacklog: 1 });
    const running = heldWrite(log, 'running');
    const queued = heldWrite(log, 'queued');
    expect(writes.add(running.write)).toBe(true);
    expect(writes.add(queued.write)).toBe(true);
    expect(writes.add(heldWrite(log, 'dropped').write)).toBe(false);
    expect(writes.dropped).toBe(1);
    running.finish();
    queued.finish();
    expect(await writes.idle(1000)).toBe(true);
    expect(log).toEqual(['start running', 'end running', 'start queued', 'end queued']);
  });

  it('says when writes did not finish in time', async () => {
    const writes = new BackgroundWrites();
    const stuck = heldWrite([], 'stuck');
    writes.add(stuck.write);
    expect(await writes.idle(20)).toBe(false);
    stuck.finish();
    expect(await writes.idle(1000)).toBe(true);
  });
});

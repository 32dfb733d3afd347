// The README shows the example operator whole; this keeps the copy equal to the file that runs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('the README example', () => {
  it('is the example file, character for character', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('./greeting-operator.ts', import.meta.url), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(example);
  });
});

import { describe, expect, it } from 'vitest';
import { parseArguments } from './arguments.ts';

describe('parseArguments (what kubectl hands the plugin)', () => {
  it("passes kubectl's flags on, in any of their forms, and keeps the namespace", () => {
    const parsed = parseArguments([
      '-n',
      'shop',
      'status',
      '--context=kind',
      'pgc/accounts',
      '--kubeconfig',
      '/k',
    ]);
    expect(parsed.target).toEqual({
      flags: ['--namespace=shop', '--context=kind', '--kubeconfig=/k'],
      namespace: 'shop',
    });
    expect(parsed.command).toBe('status');
    expect(parsed.positional).toEqual(['pgc/accounts']);
  });

  it("keeps what follows -- for the client untouched, the plugin's flags apart", () => {
    const parsed = parseArguments([
      'psql',
      'accounts',
      '--superuser',
      '--timeout',
      '60s',
      '--',
      '-c',
      'select 1',
      '-n',
    ]);
    expect(parsed.options).toEqual(
      new Map([
        ['superuser', 'true'],
        ['timeout', '60s'],
      ]),
    );
    expect(parsed.rest).toEqual(['-c', 'select 1', '-n']);
    expect(parsed.target.namespace).toBeUndefined();
  });

  it('refuses a flag that needs a value and has none', () => {
    expect(() => parseArguments(['status', '-n'])).toThrow('-n needs a value');
  });
});

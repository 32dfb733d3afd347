import { describe, expect, it } from 'vitest';
import { formatConninfo, parseConninfo } from './conninfo.ts';

describe('libpq conninfo strings', () => {
  it('parses bare and quoted values, escapes included', () => {
    const parsed = parseConninfo(
      "host=10.0.0.1 port = 5432 passfile='/run/my dir/p\\'s' application_name=pg-1",
    );
    expect([...parsed]).toEqual([
      ['host', '10.0.0.1'],
      ['port', '5432'],
      ['passfile', "/run/my dir/p's"],
      ['application_name', 'pg-1'],
    ]);
  });
  it('round-trips through formatConninfo', () => {
    const original = new Map([
      ['host', 'pg-0.pg'],
      ['passfile', "/a b/c'd\\e"],
    ]);
    expect(parseConninfo(formatConninfo(original))).toEqual(original);
  });
  it('says what is wrong with a malformed string', () => {
    expect(() => parseConninfo('host')).toThrow("conninfo: missing '=' after 'host'");
    expect(() => parseConninfo("host='x")).toThrow("conninfo: unterminated quoted value for 'host'");
  });
});

import { expect } from 'vitest';
import { openClient, type EtcdConnection } from '../connection.ts';

/** Writes `count` keys `<prefix><i>` with values that name the key, and returns what was written. */
export async function writeKeys(
  connection: EtcdConnection,
  prefix: string,
  count: number,
): Promise<Map<string, string>> {
  const client = openClient(connection);
  const written = new Map<string, string>();
  try {
    for (let i = 0; i < count; i++) {
      const key = `${prefix}${String(i).padStart(4, '0')}`;
      const value = `value of ${key}`;
      await client.put(key).value(value);
      written.set(key, value);
    }
  } finally {
    client.close();
  }
  return written;
}

/** Every key and value of the cluster as one member serves it (a linearizable read through that member). */
export async function readAll(connection: EtcdConnection, clientUrl: string): Promise<Map<string, string>> {
  const client = openClient(connection, [clientUrl]);
  try {
    const all = await client.getAll().prefix('').strings();
    return new Map(Object.entries(all));
  } finally {
    client.close();
  }
}

/** Asserts that every listed member serves exactly `expected`. */
export async function expectKeyspaceOnEveryMember(
  connection: EtcdConnection,
  clientUrls: readonly string[],
  expected: ReadonlyMap<string, string>,
): Promise<void> {
  for (const url of clientUrls) {
    const actual = await readAll(connection, url);
    expect(actual.size, `key count served by ${url}`).toBe(expected.size);
    expect(Object.fromEntries(actual), `keys served by ${url}`).toEqual(Object.fromEntries(expected));
  }
}

// What a `kubectl homeostat report` bundle holds, read back: its file list and all its text, and
// every credential of a namespace, to check that none of them reached the bundle.
import { execFileSync } from 'node:child_process';
import { listObjects } from './cluster-access.ts';

export interface Bundle {
  files: string[];
  text: string;
}

export function readBundle(path: string): Bundle {
  const files = execFileSync('tar', ['-tzf', path], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const text = execFileSync('tar', ['-xzOf', path], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  return { files, text };
}

interface Secret {
  metadata: { name: string };
  data?: Record<string, string>;
}

// Keys whose values are names anyone may see (the uri, password, pgpass and keys are not among them).
const notCredentials = new Set(['username', 'user', 'host', 'port', 'dbname', 'database']);

/**
 * Every credential in `namespace`: each Secret value long enough to be one, except certificates
 * (public) and the names an application's Secret also carries (host, user name, database).
 */
export async function credentialsIn(namespace: string): Promise<{ where: string; value: string }[]> {
  const secrets = await listObjects<Secret>('secrets', namespace);
  return secrets.flatMap((secret) =>
    Object.entries(secret.data ?? {})
      .filter(([key]) => !key.endsWith('.crt') && !notCredentials.has(key))
      .map(([key, encoded]) => ({
        where: `${secret.metadata.name}/${key}`,
        value: Buffer.from(encoded, 'base64').toString('utf8'),
      }))
      .filter(({ value }) => value.length >= 8),
  );
}

// withRetries against a real HTTP server on loopback that throttles, fails, then answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeTransport } from './transport.ts';
import { withRetries } from './retry.ts';
import { InvalidError } from './errors.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function serve(
  responses: { code: number; headers?: Record<string, string> }[],
): Promise<{ transport: KubeTransport; seen: number[] }> {
  const seen: number[] = [];
  server = createServer((req, res) => {
    const next = responses[Math.min(seen.length, responses.length - 1)] ?? { code: 200 };
    seen.push(Date.now());
    res.writeHead(next.code, { 'content-type': 'application/json', ...next.headers });
    res.end(
      JSON.stringify(
        next.code === 200
          ? { ok: true }
          : { kind: 'Status', code: next.code, message: `status ${next.code}`, reason: 'Test' },
      ),
    );
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { transport: new KubeTransport(config), seen };
}

const policy = { attempts: 5, initialDelayMs: 10, maxDelayMs: 50 };

describe('withRetries', () => {
  it('retries 429 and 5xx until the server answers', async () => {
    const { transport, seen } = await serve([{ code: 429 }, { code: 503 }, { code: 500 }, { code: 200 }]);
    const result = await withRetries(
      () => transport.json<{ ok: boolean }>({ method: 'GET', path: '/x' }),
      policy,
    );
    expect(result).toEqual({ ok: true });
    expect(seen).toHaveLength(4);
    transport.close();
  });

  it("waits at least the server's Retry-After", async () => {
    const { transport, seen } = await serve([{ code: 429, headers: { 'retry-after': '1' } }, { code: 200 }]);
    await withRetries(() => transport.json({ method: 'GET', path: '/x' }), policy);
    expect(seen).toHaveLength(2);
    expect((seen[1] ?? 0) - (seen[0] ?? 0)).toBeGreaterThanOrEqual(950);
    transport.close();
  });

  it('does not retry a refusal such as 422, and gives up after the last attempt', async () => {
    const refused = await serve([{ code: 422 }]);
    await expect(
      withRetries(() => refused.transport.json({ method: 'GET', path: '/x' }), policy),
    ).rejects.toBeInstanceOf(InvalidError);
    expect(refused.seen).toHaveLength(1);
    refused.transport.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    const failing = await serve([{ code: 500 }]);
    await expect(
      withRetries(() => failing.transport.json({ method: 'GET', path: '/x' }), policy),
    ).rejects.toThrow(/500/);
    expect(failing.seen).toHaveLength(5);
    failing.transport.close();
  });
});

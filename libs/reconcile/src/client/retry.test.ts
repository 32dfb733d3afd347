// withRetries against a real HTTP server on loopback that throttles, fails, then answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeTransport } from './transport.ts';
import { withRetries } from './retry.ts';
import { InvalidError, NetworkError } from './errors.ts';
import { KubeClient } from './kube-client.ts';
import { builtin } from './resource-type.ts';
import type { ClusterAccess } from './cluster-access.ts';

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
  return { transport: new KubeTransport(access((server.address() as AddressInfo).port)), seen };
}

const access = (port: number): ClusterAccess => ({
  server: `http://127.0.0.1:${port}`,
  credentials: async () => ({ headers: {} }),
});

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
    const { transport, seen } = await serve([{ code: 429, headers: { 'retry-after': '3' } }, { code: 200 }]);
    // The waits are recorded, not spent: the backoff alone would be 10 ms at most.
    const waits: number[] = [];
    const recording = { ...policy, wait: async (ms: number) => void waits.push(ms) };
    await withRetries(() => transport.json({ method: 'GET', path: '/x' }), recording);
    expect(seen).toHaveLength(2);
    expect(waits).toEqual([3000]);
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

  it('never retries a programming error, and stops retrying when the signal aborts', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw new TypeError('x is not a function');
      }, policy),
    ).rejects.toBeInstanceOf(TypeError);
    expect(calls).toBe(1);
    const { transport, seen } = await serve([{ code: 503 }]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    await expect(
      withRetries(
        () => transport.json({ method: 'GET', path: '/x', signal: abort.signal }),
        { attempts: 50, initialDelayMs: 40, maxDelayMs: 40 },
        abort.signal,
      ),
    ).rejects.toThrow();
    expect(seen.length).toBeLessThan(10);
    transport.close();
  });

  it('retries a refused connection, a request that never reached the server', async () => {
    const { transport } = await serve([{ code: 200 }]);
    const port = transport.server.port;
    transport.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const closed = new KubeTransport(access(Number(port)));
    let attempts = 0;
    await expect(
      withRetries(() => {
        attempts++;
        return closed.json({ method: 'GET', path: '/x' });
      }, policy),
    ).rejects.toSatisfy((error) => error instanceof NetworkError && !error.mayHaveReached);
    expect(attempts).toBe(policy.attempts);
    closed.close();
  });

  it('retries a create with a fixed name, but not one with generateName that may have been made', async () => {
    const { transport, seen } = await serve([{ code: 500 }]);
    const client = new KubeClient(transport, { fieldManager: 'test', retry: policy });
    await expect(
      client.create(builtin.configMaps, { metadata: { generateName: 'once-', namespace: 'default' } }),
    ).rejects.toThrow(/500/);
    expect(seen).toHaveLength(1);
    await expect(
      client.create(builtin.configMaps, { metadata: { name: 'fixed', namespace: 'default' } }),
    ).rejects.toThrow(/500/);
    expect(seen).toHaveLength(1 + policy.attempts);
    transport.close();
  });
});

import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ClientTls {
  ca: string;
  cert: string;
  key: string;
}

/** GETs a URL once; resolves with the status code and body, or rejects on a connection error. */
export async function httpGet(
  url: string,
  tls?: ClientTls,
  timeoutMs = 2000,
): Promise<{ status: number; body: string }> {
  const tlsOptions = tls
    ? { ca: await readFile(tls.ca), cert: await readFile(tls.cert), key: await readFile(tls.key) }
    : {};
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, ...tlsOptions }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Polls `check` every `intervalMs` until it returns true. Fails early when `abort` settles first
 * (the process we wait for has died) and at `timeoutMs`, with `describe()` saying why.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; abort?: Promise<string>; describe?: () => string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let aborted: string | undefined;
  void options.abort?.then((reason) => (aborted = reason));
  let lastError = '';
  while (Date.now() < deadline) {
    if (aborted !== undefined) {
      throw new Error(`${what}: gave up because ${aborted}\n${options.describe?.() ?? ''}`);
    }
    try {
      if (await check()) return;
    } catch (error) {
      lastError = String(error);
    }
    await sleep(options.intervalMs ?? 100);
  }
  throw new Error(
    `${what}: not ready after ${options.timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ''}\n${options.describe?.() ?? ''}`,
  );
}

/**
 * The "nothing happens" counterpart of waitUntil: asks `check` every `intervalMs` for `forMs` and
 * fails at the first false answer (or error), saying when it came and `describe()`. A single look
 * after a sleep would miss a change that came and went in between.
 */
export async function consistently(
  what: string,
  check: () => Promise<boolean>,
  options: { forMs: number; intervalMs?: number; describe?: () => string },
): Promise<void> {
  const started = Date.now();
  for (;;) {
    let answer: boolean | string;
    try {
      answer = await check();
    } catch (error) {
      answer = `error: ${String(error)}`;
    }
    if (answer !== true) {
      const why = answer === false ? '' : ` (${answer})`;
      throw new Error(
        `${what}: no longer true after ${Date.now() - started} ms${why}\n${options.describe?.() ?? ''}`,
      );
    }
    if (Date.now() - started >= options.forMs) return;
    await sleep(options.intervalMs ?? 100);
  }
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from '../metrics/prometheus.ts';

/** A check behind /healthz or /readyz: resolves to an error message, or undefined when fine. */
export type Check = () => string | undefined;

/** Serves /healthz and /readyz (probes) or /metrics (Prometheus) on a port. */
export class ProbeServer {
  readonly #server: Server;
  readonly #host: string;
  #port: number;

  constructor(
    port: number,
    routes: { healthz?: Check; readyz?: Check; metrics?: Registry },
    host = '0.0.0.0',
  ) {
    this.#port = port;
    this.#host = host;
    this.#server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const check = path === '/healthz' ? routes.healthz : path === '/readyz' ? routes.readyz : undefined;
      if (check) {
        const problem = check();
        res.writeHead(problem ? 503 : 200, { 'content-type': 'text/plain' });
        res.end(problem ?? 'ok');
        return;
      }
      if (path === '/metrics' && routes.metrics) {
        const registry = routes.metrics;
        registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': registry.contentType });
            res.end(text);
          },
          (error: unknown) => {
            res.writeHead(500);
            res.end(String(error));
          },
        );
        return;
      }
      res.writeHead(404);
      res.end('not found');
    });
  }

  /** Starts listening; resolves with the bound port (useful when asked for port 0). */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, this.#host, () => resolve());
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    return this.#port;
  }

  get port(): number {
    return this.#port;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

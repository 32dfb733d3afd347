// Real memcached servers (Debian's `memcached`) on loopback for the scaling benchmark and its tests.
// A server has a stable name (memcached-0, memcached-1, ...), as a StatefulSet-like pod would, and
// keeps its port when it is stopped and started again, so a restarted server is the same slot.
import { connect } from 'node:net';
import { join } from 'node:path';
import { freeLoopbackPort, logTail, startProcess, waitUntil, type ManagedProcess } from '@homeostat/testing';

/** A memcached slot: a stable name and the loopback address its process listens on. */
export interface MemcachedServer {
  readonly name: string;
  /** `127.0.0.1:port`, the form memcached clients take. */
  readonly address: string;
  /** True while a process serves this slot. */
  isRunning(): boolean;
  /** Starts an empty memcached on this slot's port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the process (and so drops everything it held); a no-op when it is not running. */
  stop(): Promise<void>;
}

export interface MemcachedServerOptions {
  name: string;
  /** Directory for the process's log file. */
  logDir: string;
  /** Item memory in MB (`-m`): the benchmark sizes it so that nothing is evicted. */
  memoryMb?: number;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Sends text-protocol commands (each ending in \r\n) on a connection of its own, then `quit`;
 * resolves with memcached's whole answer once it has closed the connection.
 */
export function textSession(address: string, commands: string): Promise<string> {
  const [host = '', port = ''] = address.split(':');
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port) });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(answer));
    socket.write(`${commands}quit\r\n`);
  });
}

/** Reserves a loopback port for a memcached slot; call `start()` to run a server on it. */
export async function memcachedServer(options: MemcachedServerOptions): Promise<MemcachedServer> {
  const port = await freeLoopbackPort();
  const logFile = join(options.logDir, `${options.name}.log`);
  let process_: ManagedProcess | undefined;
  return {
    name: options.name,
    address: `127.0.0.1:${port}`,
    isRunning: () => process_?.isRunning() ?? false,
    async start() {
      if (process_?.isRunning()) throw new Error(`${options.name} is already running`);
      const started = startProcess({
        name: options.name,
        command: 'memcached',
        args: [
          '--listen=127.0.0.1',
          `--port=${port}`,
          '--udp-port=0',
          `--memory-limit=${options.memoryMb ?? 64}`,
          '--threads=1',
          // memcached refuses to start as root without a user; naming root itself keeps the
          // credentials unchanged, so the kernel's parent-death signal set by startProcess holds.
          ...(process.getuid?.() === 0 ? ['--user=root'] : []),
        ],
        logFile,
      });
      process_ = started;
      const exited = started.exited.then((how) => `memcached exited (${String(how)})`);
      await waitUntil(`${options.name} on port ${port}`, () => accepts(port), {
        timeoutMs: 10_000,
        intervalMs: 20,
        abort: exited,
        describe: () => logTail(logFile),
      });
    },
    async stop() {
      await process_?.stop();
      process_ = undefined;
    },
  };
}

// Ports handed to one test process are never handed to another while the first lives, even once
// the first has stopped listening on them (a member stopped for a restart), and are released when
// it ends. Two real processes: this one, and a child that asks for ports and then waits.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort, portReservation } from './free-port.ts';

const module = fileURLToPath(new URL('./free-port.ts', import.meta.url));

/** Whether some process holds the reservation of `port` (binding it here fails). */
async function reserved(port: number): Promise<boolean> {
  const probe = createServer();
  const free = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(portReservation(port), () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return !free;
}

describe('freeLoopbackPort across processes', () => {
  it('keeps the ports another live process was given from this one, and the kernel frees them when it ends', async () => {
    // The child takes 200 ports, listens on none of them, reports them and waits for stdin to end.
    const script = `
      const { freeLoopbackPort } = await import(${JSON.stringify(module)});
      const ports = [];
      for (let i = 0; i < 200; i++) ports.push(await freeLoopbackPort());
      console.log(JSON.stringify(ports));
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const theirs: number[] = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(JSON.parse(out) as number[]);
      });
      child.once('exit', (code) => reject(new Error(`the child exited with ${code} before reporting`)));
    });
    expect(new Set(theirs).size).toBe(200);
    for (const port of theirs.slice(0, 20)) expect(await reserved(port)).toBe(true);

    const mine: number[] = [];
    for (let i = 0; i < 400; i++) mine.push(await freeLoopbackPort());
    expect(mine.filter((port) => theirs.includes(port))).toEqual([]);
    // Each one is free to listen on now.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(mine[0], '127.0.0.1', resolve));
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    await exited;
    // Released by the kernel with the process: nothing left behind.
    for (const port of theirs.slice(0, 20)) expect(await reserved(port)).toBe(false);
  });
});

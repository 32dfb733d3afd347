// Ports for the servers tests start on loopback. A port the OS reports free is free only for a
// moment: a test that stops a member and starts it again on the same port (a reboot, a crash)
// could find it taken in between by a server another test file, in another worker process, was
// given meanwhile. So every port handed out is reserved machine-wide for the life of the process
// that asked: it holds an abstract Unix socket named after the port, which only one process can
// hold and which the kernel releases when that process ends, however it ends (nothing is left
// behind). Ports come from a range below the kernel's ephemeral range (no outgoing connection is
// given one) and below Kubernetes' NodePort range (the local cluster's rules catch those).
import { createServer, type Server } from 'node:net';

const first = 20_000;
const last = 29_999;
const held = new Map<number, Server>();
// Processes start looking at different places, so they seldom try the same ports.
let next = first + ((process.pid * 7919) % (last - first + 1));

/** The abstract socket (Linux: a name starting with NUL, no file) that stands for `port`. */
export const portReservation = (port: number): string => `\0homeostat-test-port-${port}`;

function listen(server: Server, where: string | number): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    const done = () => resolve(true);
    if (typeof where === 'number') server.listen(where, '127.0.0.1', done);
    else server.listen(where, done);
  });
}

/** A TCP port on 127.0.0.1, free now and kept from every other test process until this one ends. */
export async function freeLoopbackPort(): Promise<number> {
  for (let tried = 0; tried <= last - first; tried++) {
    const port = next;
    next = next >= last ? first : next + 1;
    if (held.has(port)) continue;
    const reservation = createServer();
    reservation.unref();
    if (!(await listen(reservation, portReservation(port)))) continue; // another test process has it
    const probe = createServer();
    probe.unref();
    if (await listen(probe, port)) {
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      held.set(port, reservation);
      return port;
    }
    // Held by a process that is not a test's: leave it to it.
    reservation.close();
  }
  throw new Error(`no free port in ${first}-${last} on 127.0.0.1`);
}

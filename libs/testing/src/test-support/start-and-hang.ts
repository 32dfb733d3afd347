// Test helper: starts a control plane, prints the pids of its processes as JSON, then hangs until
// killed. The lifecycle test SIGKILLs this process and checks that no server outlives it.
import { startControlPlane } from '../control-plane.ts';

const controlPlane = await startControlPlane();
process.stdout.write(
  `${JSON.stringify({ pids: controlPlane.processes().map((p) => p.pid), workDir: controlPlane.workDir })}\n`,
);
setInterval(() => undefined, 1 << 30);

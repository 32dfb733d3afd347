// Installs `kubectl-homeostat` where kubectl finds plugins (any directory on PATH): one file,
// bundled from src/main.ts, runnable by any Node from 20 on. Usage:
//   npm run kubectl-plugin [-- DIRECTORY]     (default: $HOMEOSTAT_PLUGIN_DIR, else ~/.local/bin)
import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const directory = resolve(
  process.argv[2] ?? process.env['HOMEOSTAT_PLUGIN_DIR'] ?? join(homedir(), '.local', 'bin'),
);
const outfile = join(directory, 'kubectl-homeostat');
mkdirSync(directory, { recursive: true });
await build({
  entryPoints: [fileURLToPath(new URL('../src/main.ts', import.meta.url))],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
const onPath = (process.env['PATH'] ?? '').split(delimiter).some((dir) => resolve(dir) === directory);
console.warn(`installed ${outfile}: try \`kubectl homeostat status\``);
if (!onPath)
  console.warn(
    `${directory} is not on your PATH: add it (export PATH="${directory}:$PATH") for kubectl to find the plugin`,
  );

// Bundles the operator into one ESM file (dist/memcached-operator.mjs) for the container image:
// no node_modules in the image, so it stays small and holds only code the operator runs.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [join(root, 'src', 'main.ts')],
  outfile: join(root, 'dist', 'memcached-operator.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: false,
  legalComments: 'linked',
  // Some dependencies are CommonJS and call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  logLevel: 'warning',
});
console.warn('wrote dist/memcached-operator.mjs');

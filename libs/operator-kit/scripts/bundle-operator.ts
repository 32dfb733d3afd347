// Bundles an operator into one ESM file, <workspace>/dist/operator.mjs, for its container image:
// no node_modules in the image, so it stays small and holds only code the operator runs.
// Usage: node libs/operator-kit/scripts/bundle-operator.ts [operator workspace, default: the current folder]
import { build } from 'esbuild';
import { join, relative, resolve } from 'node:path';

const workspace = resolve(process.argv[2] ?? '.');
const outfile = join(workspace, 'dist', 'operator.mjs');
await build({
  entryPoints: [join(workspace, 'src', 'main.ts')],
  outfile,
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
console.warn(`wrote ${relative(process.cwd(), outfile)}`);

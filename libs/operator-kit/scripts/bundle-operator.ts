// Bundles an operator into <workspace>/dist/operator.mjs for its container image.
// Usage: node libs/operator-kit/scripts/bundle-operator.ts [operator workspace, default: the current folder]
import { join, relative, resolve } from 'node:path';
import { bundleOperator } from '../src/bundle/bundle-operator.ts';

const workspace = resolve(process.argv[2] ?? '.');
const outfile = join(workspace, 'dist', 'operator.mjs');
await bundleOperator(join(workspace, 'src', 'main.ts'), outfile);
console.warn(`wrote ${relative(process.cwd(), outfile)}`);

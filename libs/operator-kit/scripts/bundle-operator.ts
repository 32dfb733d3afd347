// Bundles an operator into <workspace>/dist/operator.mjs for its container image, with the files
// its package.json lists under "homeostat": { "bundleFiles": [...] } (paths from the repository root).
// Usage: node libs/operator-kit/scripts/bundle-operator.ts [operator workspace, default: the current folder]
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { bundleOperator } from '../src/bundle/bundle-operator.ts';

const workspace = resolve(process.argv[2] ?? '.');
const outfile = join(workspace, 'dist', 'operator.mjs');
const manifest = JSON.parse(await readFile(join(workspace, 'package.json'), 'utf8')) as {
  homeostat?: { bundleFiles?: string[] };
};
await bundleOperator(join(workspace, 'src', 'main.ts'), outfile, {
  bundleFiles: manifest.homeostat?.bundleFiles ?? [],
});
console.warn(`wrote ${relative(process.cwd(), outfile)}`);

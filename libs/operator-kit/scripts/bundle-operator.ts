// Bundles an operator into <workspace>/dist/operator.mjs for its container image, with the files
// its package.json lists under "homeostat": { "bundleFiles": [...] } (paths from the repository root),
// and the program its chart's `helm test` pod runs from the same image into dist/helm-test.mjs.
// Usage: node libs/operator-kit/scripts/bundle-operator.ts [operator workspace, default: the current folder]
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleOperator } from '../src/bundle/bundle-operator.ts';

const workspace = resolve(process.argv[2] ?? '.');
const outfile = join(workspace, 'dist', 'operator.mjs');
const manifest = JSON.parse(await readFile(join(workspace, 'package.json'), 'utf8')) as {
  homeostat?: { bundleFiles?: string[] };
};
await bundleOperator(join(workspace, 'src', 'main.ts'), outfile, {
  bundleFiles: manifest.homeostat?.bundleFiles ?? [],
});
const helmTest = join(workspace, 'dist', 'helm-test.mjs');
await bundleOperator(fileURLToPath(new URL('../src/helm-test/main.ts', import.meta.url)), helmTest, {
  bundleFiles: [],
});
console.warn(`wrote ${relative(process.cwd(), outfile)} and ${relative(process.cwd(), helmTest)}`);

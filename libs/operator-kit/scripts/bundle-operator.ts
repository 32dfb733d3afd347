// Bundles an operator into one ESM file, <workspace>/dist/operator.mjs, for its container image:
// no node_modules in the image, so it stays small and holds only code the operator runs.
// Usage: node libs/operator-kit/scripts/bundle-operator.ts [operator workspace, default: the current folder]
import { build, type Plugin } from 'esbuild';
import { cp, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const workspace = resolve(process.argv[2] ?? '.');
const outDir = join(workspace, 'dist');
const outfile = join(outDir, 'operator.mjs');

// A CommonJS dependency that reads files next to its own code (etcd3 loads its .proto files from
// `${__dirname}/../proto`) gets a __dirname that points where those files are copied: the
// dependency's own folder, from the repository root, under dist/. Without it the ESM bundle has no
// __dirname at all, and Node refuses to start it.
const packageDirname: Plugin = {
  name: 'package-dirname',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!source.includes('__dirname')) return undefined;
      const folder = JSON.stringify(relative(repoRoot, dirname(path)).split('\\').join('/'));
      return {
        contents: source.replaceAll(/\b__dirname\b/g, `(__bundleDir + "/" + ${folder})`),
        loader: 'js',
      };
    });
  },
};

// Files the bundle reads at run time, from the operator's package.json
// ("homeostat": { "bundleFiles": ["node_modules/etcd3/proto"] }, paths from the repository root),
// copied under dist/ at the same paths.
const manifest = JSON.parse(await readFile(join(workspace, 'package.json'), 'utf8')) as {
  homeostat?: { bundleFiles?: string[] };
};
for (const path of manifest.homeostat?.bundleFiles ?? []) {
  await cp(join(repoRoot, path), join(outDir, path), { recursive: true });
}

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
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); const __bundleDir = import.meta.dirname;",
  },
  plugins: [packageDirname],
  logLevel: 'warning',
});
console.warn(`wrote ${relative(process.cwd(), outfile)}`);

// Bundles an operator into one ESM file for its container image: no node_modules in the image, so
// it stays small and holds only code the operator runs. One bundled file also starts with less
// memory than the same code loaded module by module (and without Node's type stripping).
import { build, type Plugin } from 'esbuild';
import { cp, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The Node flags an operator image runs its bundle with (operators/Dockerfile says the same, and a
 * test of every operator's image checks it): small young-generation semi-spaces, for about 25 MB
 * less resident memory at 1000 cached objects; no JIT compiler, for 16-18 MB less (its code pages
 * in the node binary, its compiled code and its working memory) at the price of about 40% more CPU
 * seconds per reconcile (an operator waits on the API server, and its hot paths, JSON, TLS and HTTP
 * parsing, are native code either way); and V8's memory-over-speed heuristics, whose heap shrinks
 * back once the work is done (at 1000 Widgets 63 MB 20 s after converging instead of 71 MB, for
 * the same peak). Without a JIT there is no WebAssembly, so `fetch()` (undici's HTTP parser is
 * WebAssembly) fails in an operator: use node:http(s), as the library does. ADR 0601.
 */
export const operatorNodeFlags = ['--max-semi-space-size=1', '--jitless', '--optimize-for-size'] as const;

/**
 * The same flags with V8's JIT compiler: what the charts' `jit: true` runs (less CPU per
 * reconcile, about 25 MB more resident memory; libs/reconcile/README.md measures both).
 */
export const operatorJitNodeFlags: readonly string[] = operatorNodeFlags.filter(
  (flag) => flag !== '--jitless',
);

// A CommonJS dependency that reads files next to its own code (etcd3 loads its .proto files from
// `${__dirname}/../proto`) gets a __dirname that points where those files are copied: the
// dependency's own folder, from the repository root, under the bundle's folder. Without it the ESM
// bundle has no __dirname at all, and Node refuses to start it.
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

const builtins = new Set(builtinModules);

// Node's own modules reach the bundle as CommonJS exports (process.getBuiltinModule), never through
// an ESM import: the ESM namespace of a built-in reads every export once, lazy ones included, so
// `import ... from 'node:http'` alone loads undici (for http's WebSocket export), `node:crypto`
// WebCrypto, `node:fs` Utf8Stream: 6 MB more resident memory in an operator that uses none of them
// (ADR 0601). Named imports still work: esbuild reads them off the exports object when used.
const builtinsAsCommonJs: Plugin = {
  name: 'builtins-as-commonjs',
  setup(builder) {
    builder.onResolve({ filter: /^(node:)?[a-z_][a-z0-9_/]*$/ }, ({ path, kind }) => {
      if (kind !== 'import-statement' && kind !== 'dynamic-import') return undefined;
      const bare = path.replace(/^node:/, '');
      if (!path.startsWith('node:') && !builtins.has(bare)) return undefined;
      return { path: `node:${bare}`, namespace: 'node-builtin' };
    });
    builder.onLoad({ filter: /.*/, namespace: 'node-builtin' }, ({ path }) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(path)});`,
      loader: 'js',
    }));
  },
};

/**
 * Bundles the entry point (an operator's src/main.ts) into `outfile`, minified, for Node 24.
 * `bundleFiles` (paths from the repository root, e.g. node_modules/etcd3/proto) are files the
 * bundle reads at run time: copied next to it at the same paths.
 */
export async function bundleOperator(
  entry: string,
  outfile: string,
  options: { bundleFiles?: readonly string[] } = {},
): Promise<void> {
  for (const path of options.bundleFiles ?? []) {
    await cp(join(repoRoot, path), join(dirname(outfile), path), { recursive: true });
  }
  await build({
    entryPoints: [entry],
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
      js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url); const __bundleDir = import.meta.dirname;",
    },
    plugins: [builtinsAsCommonJs, packageDirname],
    logLevel: 'warning',
  });
}

// The bundler on a real esbuild build, run on the Node that runs operators: built-ins reach the
// bundle as CommonJS exports, so importing node:http does not load undici (ADR 0601 addendum).
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleOperator, operatorNodeFlags } from './bundle-operator.ts';

describe('bundleOperator', () => {
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'homeostat-bundle-'));
    const entry = join(dir, 'entry.ts');
    await writeFile(
      entry,
      [
        "import { request } from 'node:http';",
        "import * as fs from 'node:fs';",
        "import { createHash } from 'node:crypto';",
        'const loaded = process.moduleLoadList.filter((m) => m.includes("undici"));',
        'console.log(JSON.stringify({ request: typeof request, fs: typeof fs.readFileSync,',
        '  hash: createHash("sha256").update("x").digest("hex").slice(0, 8), undici: loaded }));',
      ].join('\n'),
    );
    bundle = join(dir, 'out', 'entry.mjs');
    await bundleOperator(entry, bundle);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('imports no built-in as an ES module', async () => {
    const source = await readFile(bundle, 'utf8');
    expect(source).not.toMatch(/from\s*["']node:/);
    expect(source).toContain('process.getBuiltinModule("node:http")');
  });

  it('runs with the images’ flags, its named imports working, without loading undici', () => {
    const out = execFileSync(process.execPath, [...operatorNodeFlags, bundle], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ request: 'function', fs: 'function', hash: '2d711642', undici: [] });
  });
});

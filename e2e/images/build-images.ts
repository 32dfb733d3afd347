// Builds the images in images.json offline and imports them into a containerd. Each image is
// rebuilt only when its inputs change (Dockerfile folder, added binaries, base image); the
// result is kept as a `docker save` archive in the cache, so a fresh cluster imports images
// without starting Docker at all.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { binaryPath, cacheDir } from '@homeostat/testing';
import { requireHostPackages } from '../cluster/host-packages.ts';
import { run, tryRun } from '../cluster/run-command.ts';
import { debianRootfs, debianRootfsKey } from './debian-rootfs.ts';
import { dockerCli, ensureDockerDaemon, type DockerDaemon } from './docker-daemon.ts';
import { imageRecipes, recipeDir, repositoryRoot, type ImageRecipe } from './image-recipes.ts';
export type { ImageRecipe } from './image-recipes.ts';

const inputsLabel = 'org.homeostat.inputs';

interface Stamp {
  inputs: string;
  /** Docker's image id: the sha256 of the image config, the same digest containerd reports. */
  id: string;
}

export interface EnsureImagesOptions {
  /** References to build (and import); default: all of images.json. Their bases are built too. */
  refs?: readonly string[];
  /** The recipes to choose from (default: every image in images.json); bases listed before their images. */
  recipes?: readonly ImageRecipe[];
  /** Import into this containerd (its `k8s.io` namespace, the one the kubelet uses). */
  containerd?: { socket: string; importedRecord: string };
  log: (line: string) => void;
}

const imagesCache = () => join(cacheDir(), 'images');
const stampsFile = () => join(imagesCache(), 'stamps.json');
const archivePath = (ref: string) =>
  join(imagesCache(), 'archives', `${ref.replace(/[^a-zA-Z0-9._-]+/g, '_')}.tar`);

/** Builds what is stale among the requested images, then imports what the containerd lacks. */
export async function ensureImages(options: EnsureImagesOptions): Promise<Record<string, string>> {
  const known = options.recipes ?? imageRecipes;
  const wanted = options.refs ?? known.map((r) => r.ref);
  const recipes = withBases(known, wanted);
  const stamps = readJson<Record<string, Stamp>>(stampsFile()) ?? {};
  let docker: DockerDaemon | undefined;
  const ids: Record<string, string> = {};
  try {
    for (const recipe of recipes) {
      const files = await contextFiles(recipe);
      const inputs = inputsOf(recipe, files, recipe.base ? ids[recipe.base] : undefined);
      const stamp = stamps[recipe.ref];
      if (stamp?.inputs === inputs && existsSync(archivePath(recipe.ref))) {
        ids[recipe.ref] = stamp.id;
        continue;
      }
      if (!docker) await requireHostPackages('images');
      docker ??= await ensureDockerDaemon(options.log);
      const started = Date.now();
      // A base built earlier may live only as an archive (another daemon built it).
      if (recipe.base) await ensureInDaemon(recipe.base);
      ids[recipe.ref] = await buildOne(recipe, files, inputs, options.log);
      await mkdir(join(imagesCache(), 'archives'), { recursive: true });
      await run(dockerCli, ['save', '-o', `${archivePath(recipe.ref)}.partial`, recipe.ref]);
      await rename(`${archivePath(recipe.ref)}.partial`, archivePath(recipe.ref));
      stamps[recipe.ref] = { inputs, id: ids[recipe.ref] ?? '' };
      await writeFile(stampsFile(), JSON.stringify(stamps, null, 2));
      options.log(`${recipe.ref} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await docker?.stop();
  }
  if (options.containerd) await importInto(options.containerd, wanted, ids, options.log);
  return ids;
}

function withBases(known: readonly ImageRecipe[], refs: readonly string[]): ImageRecipe[] {
  const needed = new Set<string>();
  const add = (ref: string) => {
    const recipe = known.find((r) => r.ref === ref);
    if (!recipe)
      throw new Error(`no recipe builds ${ref}; known images: ${known.map((r) => r.ref).join(', ')}`);
    if (recipe.base) add(recipe.base);
    needed.add(ref);
  };
  refs.forEach(add);
  // Recipes list bases first, so filtering keeps a valid build order.
  return known.filter((r) => needed.has(r.ref));
}

/** Loads an image into the daemon from its cached archive when the daemon does not have it. */
export async function ensureInDaemon(ref: string): Promise<void> {
  if ((await tryRun(dockerCli, ['image', 'inspect', '--format', '{{.Id}}', ref])).ok) return;
  await run(dockerCli, ['load', '-i', archivePath(ref)], { timeoutMs: 10 * 60_000 });
}

/** The `docker save` archive of a built image, in the cache. */
export const imageArchive = (ref: string): string => archivePath(ref);

/** Context name → absolute source path, for the recipe folder's files and the extra ones. */
async function contextFiles(recipe: ImageRecipe): Promise<Record<string, string>> {
  if (recipe.kind === 'repo-dockerfile') return repositoryFiles(recipe);
  if (recipe.kind !== 'dockerfile') return {};
  const dir = recipeDir(recipe);
  const own = Object.fromEntries(
    readdirSync(dir)
      .filter((name) => statSync(join(dir, name)).isFile() && !name.endsWith('.go') && name !== 'go.mod')
      .map((name) => [name, join(dir, name)]),
  );
  return { ...own, ...(await recipe.extraFiles?.()) };
}

// The files a repo-dockerfile recipe's Dockerfile copies, as git lists them (untracked included,
// ignored excluded), plus the Dockerfile itself; keyed by repository path.
async function repositoryFiles(recipe: ImageRecipe): Promise<Record<string, string>> {
  const listed = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...(recipe.sources ?? [])],
    {
      cwd: repositoryRoot,
    },
  );
  // Tests never reach the image (.dockerignore), so editing one rebuilds nothing.
  const sources = listed.split('\0').filter((p) => p && !p.endsWith('.test.ts'));
  const paths = [...sources, recipe.dockerfile ?? 'Dockerfile'];
  // A tracked file deleted in the working tree is listed but absent; it is not an input.
  return Object.fromEntries(
    paths.filter((p) => existsSync(join(repositoryRoot, p))).map((p) => [p, join(repositoryRoot, p)]),
  );
}

function inputsOf(recipe: ImageRecipe, files: Record<string, string>, baseId: string | undefined): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ ref: recipe.ref, kind: recipe.kind, args: recipe.buildArgs ?? {}, baseId }));
  if (recipe.kind === 'debian-rootfs') hash.update(debianRootfsKey(recipe.suite));
  for (const name of Object.keys(files).sort()) {
    const path = files[name] ?? '';
    hash.update(`${name}\0${statSync(path).mode & 0o111 ? 'x' : '-'}\0`);
    hash.update(readFileSync(path));
  }
  return hash.digest('hex');
}

async function buildOne(
  recipe: ImageRecipe,
  files: Record<string, string>,
  inputs: string,
  log: (line: string) => void,
): Promise<string> {
  const existing = await run(dockerCli, [
    'image',
    'ls',
    '-q',
    '--no-trunc',
    '--filter',
    `label=${inputsLabel}=${inputs}`,
    recipe.ref,
  ]);
  if (existing.trim()) return existing.trim().split('\n')[0] ?? '';
  if (recipe.kind === 'debian-rootfs') {
    const tarball = await debianRootfs(log, recipe.suite);
    log(`importing the Debian root filesystem as ${recipe.ref}`);
    await run(dockerCli, [
      'import',
      '--change',
      'CMD ["bash"]',
      '--change',
      `LABEL ${inputsLabel}=${inputs}`,
      tarball,
      recipe.ref,
    ]);
  } else {
    const where = await dockerBuildContext(recipe, files);
    log(`docker build ${recipe.ref}${recipe.dockerfile ? ` (${recipe.dockerfile})` : ''}`);
    const buildArgs = Object.entries({ ...recipe.buildArgs, ...where.buildArgs }).flatMap(([k, v]) => [
      '--build-arg',
      `${k}=${v}`,
    ]);
    // Host networking: RUN steps reach Debian's mirror and the npm registry the way the host does;
    // the daemon has no bridge.
    await run(
      dockerCli,
      [
        'build',
        '--network',
        'host',
        '--label',
        `${inputsLabel}=${inputs}`,
        ...buildArgs,
        ...where.dockerfileArgs,
        '-t',
        recipe.ref,
        where.context,
      ],
      { env: { ...process.env, DOCKER_BUILDKIT: '0' }, timeoutMs: 30 * 60_000 },
    );
  }
  return (await run(dockerCli, ['image', 'inspect', '--format', '{{.Id}}', recipe.ref])).trim();
}

// A recipe folder's files are copied into a fresh context; a repo-dockerfile builds from the
// repository root itself (its .dockerignore keeps node_modules and history out).
async function dockerBuildContext(
  recipe: ImageRecipe,
  files: Record<string, string>,
): Promise<{ context: string; dockerfileArgs: string[]; buildArgs?: Record<string, string> }> {
  if (recipe.kind === 'repo-dockerfile') {
    const extraCa = localCaCertificates();
    return {
      context: repositoryRoot,
      dockerfileArgs: ['-f', join(repositoryRoot, recipe.dockerfile ?? 'Dockerfile')],
      // The operators' build stages run npm ci; behind a TLS-inspecting proxy they need its CA.
      ...(extraCa ? { buildArgs: { EXTRA_CA_CERTS: extraCa } } : {}),
    };
  }
  const context = join(imagesCache(), 'context', recipe.dir ?? 'image');
  await rm(context, { recursive: true, force: true });
  await mkdir(context, { recursive: true });
  for (const [name, source] of Object.entries(files)) await copyFile(source, join(context, name));
  return { context, dockerfileArgs: [] };
}

async function importInto(
  containerd: { socket: string; importedRecord: string },
  refs: readonly string[],
  ids: Record<string, string>,
  log: (line: string) => void,
): Promise<void> {
  const imported = readJson<Record<string, string>>(containerd.importedRecord) ?? {};
  // The record alone can lie: an image removed from containerd since (by hand, or by a kubelet's
  // image garbage collection) would never come back, so an image also has to be there.
  const present = new Set(
    (
      await run(binaryPath('ctr'), [
        '--address',
        containerd.socket,
        '--namespace',
        'k8s.io',
        'images',
        'ls',
        '-q',
      ])
    ).split('\n'),
  );
  for (const ref of refs) {
    if (imported[ref] === ids[ref] && present.has(ref)) continue;
    const started = Date.now();
    await run(
      binaryPath('ctr'),
      ['--address', containerd.socket, '--namespace', 'k8s.io', 'images', 'import', archivePath(ref)],
      {
        timeoutMs: 10 * 60_000,
      },
    );
    imported[ref] = ids[ref] ?? '';
    await writeFile(containerd.importedRecord, JSON.stringify(imported, null, 2));
    log(`imported ${ref} into the cluster's containerd (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}

// CA certificates this machine trusts beyond Debian's bundle (Debian's place for local ones).
function localCaCertificates(): string | undefined {
  const dir = '/usr/local/share/ca-certificates';
  if (!existsSync(dir)) return undefined;
  const pems = readdirSync(dir)
    .filter((name) => name.endsWith('.crt'))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8').trim());
  return pems.length ? pems.join('\n') : undefined;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

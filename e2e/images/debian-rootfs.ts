// The Debian bases operand and operator images start from: `debootstrap --variant=minbase <suite>`
// (bookworm for most; trixie and forky for the PostgreSQL versions only they carry, forky also for
// a current memcached), tidied into a root filesystem tarball and cached outside the repository
// under a key made of its inputs, so it is built once per machine (and again only when a recipe
// changes).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';

/** The suites a base is built from; the default one serves every image that needs no other. */
export type DebianSuite = 'bookworm' | 'trixie' | 'forky';

const mirror = 'http://deb.debian.org/debian';
const securityMirror = 'http://deb.debian.org/debian-security';

// Bump when the steps below change what ends up in the tarball.
const recipeVersion = '1';

/** Folder of the cached root filesystems. */
export const rootfsCacheDir = (): string => join(cacheDir(), 'rootfs');

/** The cache key: everything that decides the tarball's content. */
export function debianRootfsKey(suite: DebianSuite = 'bookworm'): string {
  const inputs = JSON.stringify({ suite, variant: 'minbase', mirror, securityMirror, recipeVersion });
  return createHash('sha256').update(inputs).digest('hex').slice(0, 16);
}

/** Path of the tarball for the current inputs, building it first when it is not cached. */
export async function debianRootfs(
  log: (line: string) => void,
  suite: DebianSuite = 'bookworm',
): Promise<string> {
  const tarball = join(rootfsCacheDir(), `debian-${suite}-minbase-${debianRootfsKey(suite)}.tar`);
  if (existsSync(tarball)) return tarball;
  await mkdir(rootfsCacheDir(), { recursive: true });
  const work = `${tarball}.rootfs`;
  await rm(work, { recursive: true, force: true });
  log(`debootstrap --variant=minbase ${suite} from ${mirror} (about two minutes)`);
  // A suite newer than the host's debootstrap knows is bootstrapped like testing (the sid script).
  const known = existsSync(join('/usr/share/debootstrap/scripts', suite));
  const script = known ? [] : ['/usr/share/debootstrap/scripts/sid'];
  await run('debootstrap', ['--variant=minbase', suite, work, mirror, ...script], { timeoutMs: 30 * 60_000 });
  await tidy(work, suite);
  log('packing the root filesystem');
  // /dev, /proc and /sys are provided by the container runtime; the rest is the image.
  await run('tar', [
    '--create',
    '--numeric-owner',
    '--xattrs',
    `--file=${tarball}.partial`,
    `--directory=${work}`,
    '--exclude=./dev/*',
    '--exclude=./proc/*',
    '--exclude=./sys/*',
    '.',
  ]);
  await rename(`${tarball}.partial`, tarball);
  await rm(work, { recursive: true, force: true });
  return tarball;
}

async function tidy(root: string, suite: DebianSuite): Promise<void> {
  // Derived images install packages with apt-get at build time: give them the release, its
  // updates and the security archive, as the official debian image does.
  await writeFile(
    join(root, 'etc/apt/sources.list'),
    [
      `deb ${mirror} ${suite} main`,
      `deb ${mirror} ${suite}-updates main`,
      `deb ${securityMirror} ${suite}-security main`,
      '',
    ].join('\n'),
  );
  // Package scripts must not try to start services inside an image build.
  await writeFile(join(root, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  // Keep images small: no recommended packages, no cached package lists or archives.
  await writeFile(
    join(root, 'etc/apt/apt.conf.d/90homeostat-slim'),
    'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n',
  );
  for (const dir of ['var/lib/apt/lists', 'var/cache/apt/archives', 'var/log']) {
    await run('find', [join(root, dir), '-mindepth', '1', '-type', 'f', '-delete']);
  }
  await rm(join(root, 'var/cache/apt/pkgcache.bin'), { force: true });
  await rm(join(root, 'var/cache/apt/srcpkgcache.bin'), { force: true });
  // The host's resolver and hostname do not belong in an image.
  await writeFile(join(root, 'etc/resolv.conf'), '');
  await writeFile(join(root, 'etc/hostname'), '');
}

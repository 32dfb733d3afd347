// The supported etcd versions are written once (etcd-versions.ts); the images they name must be
// ones the local cluster builds, or a member would ask for an image that does not exist there.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultVersion, etcdReleases, imageOf, minorOf, supportedVersions } from './etcd-versions.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('supported etcd versions', () => {
  it('are distinct major.minor.patch versions, oldest first, the newest the default', () => {
    expect(supportedVersions.length).toBeGreaterThan(0);
    for (const version of supportedVersions) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(new Set(supportedVersions).size).toBe(supportedVersions.length);
    const order = (v: string) =>
      v
        .split('.')
        .map(Number)
        .reduce((sum, n) => sum * 1000 + n, 0);
    expect([...supportedVersions].sort((a, b) => order(a) - order(b))).toEqual(supportedVersions);
    expect(defaultVersion).toBe(supportedVersions.at(-1));
  });

  it('each name the image of their own version', () => {
    for (const release of etcdReleases) expect(release.image).toMatch(new RegExp(`:v${release.version}$`));
    expect(imageOf('3.6.16')).toBe('gcr.io/etcd-development/etcd:v3.6.16');
    expect(imageOf('9.9.9')).toBeUndefined();
    expect(imageOf('3.6.16', 'mirror.example/etcd')).toBe('mirror.example/etcd:v3.6.16');
    expect(minorOf('3.6.16')).toBe('3.6');
  });

  it('name only images the local cluster builds (e2e/images/images.json)', () => {
    const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
    // The catalogue belongs to the e2e suites; a checkout without them has nothing to compare.
    if (!existsSync(catalogue)) return;
    const images = JSON.parse(readFileSync(catalogue, 'utf8')) as { operands: Record<string, string> };
    const built = Object.values(images.operands);
    for (const release of etcdReleases) expect(built).toContain(release.image);
  });
});

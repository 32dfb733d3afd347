// The link check on the repository's own pages, and on small pages of the test's own that show it
// can fail.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, headingAnchors, markdownLinks } from './markdown-links.ts';
import { workHistoryReferences } from './work-history.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('markdown links', () => {
  it('finds inline and reference links, and none in code', () => {
    const page = [
      'See [the guide](guide.md#install) and [x][ref].',
      '`[not](a-link.md)` and',
      '```',
      '[nor](this.md)',
      '```',
      '[ref]: ../other.md "title"',
    ].join('\n');
    expect(markdownLinks(page).map((l) => [l.target, l.line])).toEqual([
      ['guide.md#install', 1],
      ['../other.md', 6],
    ]);
  });

  it('names headings as GitHub anchors them', () => {
    const anchors = headingAnchors(
      '# Install one operator\n## `npm start` (the main job)\n## Install one operator\n',
    );
    expect([...anchors]).toEqual([
      'install-one-operator',
      'npm-start-the-main-job',
      'install-one-operator-1',
    ]);
  });

  it('reports a missing page, a missing heading, a path out of the repository and an address', () => {
    const root = mkdtempSync(join(tmpdir(), 'links-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n## Backups\n');
    writeFileSync(
      join(root, 'README.md'),
      [
        '[ok](docs/guide.md#backups) [ok too](docs/) [self](#top)',
        '[gone](docs/missing.md) [no heading](docs/guide.md#restore)',
        '[outside](../shared/DESIGN.md) [web](https://example.com/)',
        '# Top',
      ].join('\n'),
    );
    expect(brokenLinks(root, ['README.md'])).toEqual([
      'README.md:2: docs/missing.md: no such file or folder',
      'README.md:2: docs/guide.md#restore: no such heading',
      'README.md:3: ../shared/DESIGN.md leads outside the repository',
      'README.md:3: https://example.com/ leads outside the repository',
    ]);
  });
});

describe('work-history references', () => {
  it('finds numbered work periods and issue numbers in prose, also wrapped, not in code or ordinary words', () => {
    const page = [
      'Measured in session 4, then (issue #12) and issue 13.',
      'A session can lower `synchronous_commit`; this wave of changes.',
      '`session 7` in code',
      '```',
      'wave 6',
      '```',
      "The issue with a primary; sessions of PostgreSQL; controller-runtime's issue #1464; a wave",
      '6 wrapped onto the next line.',
    ].join('\n');
    expect(workHistoryReferences(page).map((r) => [r.text, r.line])).toEqual([
      ['session 4', 1],
      ['issue #12', 1],
      ['issue 13', 1],
      ['this wave', 2],
      ['wave 6', 7],
    ]);
  });
});

function repositoryPages(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((p) => p !== '' && !p.includes('node_modules/'));
}

describe("the repository's pages", () => {
  it('link only to pages, files, folders and headings inside the repository', () => {
    const pages = repositoryPages();
    expect(pages.length).toBeGreaterThan(10);
    expect(brokenLinks(repoRoot, pages)).toEqual([]);
  });

  it('name no work period, wave or issue number a reader cannot follow', () => {
    const found = repositoryPages().flatMap((page) =>
      workHistoryReferences(readFileSync(join(repoRoot, page), 'utf8')).map(
        (r) => `${page}:${r.line}: ${r.text}`,
      ),
    );
    expect(found).toEqual([]);
  });
});

describe('the decision records', () => {
  it('each say their status under their title, and name the record that overrides them', () => {
    const adrDir = join(repoRoot, 'docs', 'adr');
    const records = readdirSync(adrDir).filter((f) => f.endsWith('.md'));
    expect(records.length).toBeGreaterThan(10);
    const missing = records.filter((file) => {
      const lines = readFileSync(join(adrDir, file), 'utf8').split('\n');
      const status = lines.slice(1).find((l) => l.trim() !== '');
      return !/^Status: (proposed|accepted|superseded|deprecated|rejected)\b/.test(status ?? '');
    });
    expect(missing, 'records without a Status line under the title').toEqual([]);
    const superseded = records.filter((file) =>
      /^Status: superseded/m.test(readFileSync(join(adrDir, file), 'utf8')),
    );
    for (const file of superseded) {
      expect(readFileSync(join(adrDir, file), 'utf8'), `${file} names its successor`).toMatch(
        /^Status: superseded.*\]\(\d{4}-/m,
      );
    }
  });
});

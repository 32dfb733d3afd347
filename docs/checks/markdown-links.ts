// Finds the links of a markdown page and tells which of them do not resolve inside the
// repository: a page, file or folder that does not exist, a heading anchor no page has, or an
// address outside the repository (the docs speak only of what a reader of the repository has).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A link as written on a page, with its line for the report. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** The inline and reference-style link targets of `markdown`, outside code blocks and code spans. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fenceMark = /^\s*(```|~~~)/.exec(text)?.[1];
    if (fenceMark !== undefined) {
      if (fence === undefined) fence = fenceMark;
      else if (fence === fenceMark) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const prose = text.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] ?? '', line: index + 1 });
    }
    const reference = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (reference?.[1]) links.push({ target: reference[1], line: index + 1 });
  });
  return links;
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to dashes. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .toLowerCase()
      .replace(/[`*_[\]]|\(([^)]*)\)(?=$|\s)/g, (m, inner: string | undefined) => inner ?? '')
      .replace(/[^\p{L}\p{N}\s-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Why `link` on the page at `page` (absolute) does not resolve inside `root`, or undefined when it does. */
export function brokenLink(root: string, page: string, link: MarkdownLink): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `${target} leads outside the repository`;
  const [pathPart = '', anchor] = target.split('#', 2);
  const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
  const inside = relative(root, file);
  if (inside.startsWith('..') || resolve(root, inside) !== file)
    return `${target} leads outside the repository`;
  if (!existsSync(file)) return `${target}: no such file or folder`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `${target}: an anchor on something not a page`;
  return headingAnchors(readFileSync(file, 'utf8')).has(anchor) ? undefined : `${target}: no such heading`;
}

/** Every broken link of the pages `pages` (paths from `root`), as "page:line: why". */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  return pages.flatMap((page) => {
    const path = join(root, page);
    return markdownLinks(readFileSync(path, 'utf8')).flatMap((link) => {
      const why = brokenLink(root, path, link);
      return why === undefined ? [] : [`${page}:${link.line}: ${why}`];
    });
  });
}

// Finds references to the project's own work history on a page: numbered work periods ("session
// 7", "wave 6"), issue numbers ("issue 12", "issue #12"). A reader of the repository cannot follow
// them; what happened and why belongs in the decision records and the commits, and a page says
// what is true now, with dates for figures. Another project's issues ("controller-runtime's issue
// #1464") can be followed, and are left alone.

/** A reference to work history found on a page, with its line for the report. */
export interface WorkHistoryReference {
  text: string;
  line: number;
}

// `\s+` between the words: a reference may wrap onto the next line.
const patterns: readonly RegExp[] = [
  /\bsessions?\s+\d+\b/gi,
  /\b(?:this|that|same|previous|next|earlier|later)\s+(?:session|wave)\b/gi,
  /\bwaves?\s+\d+\b/gi,
  /(?<!['’]s\s+)\bissues?\s+#?\d+\b/gi,
  /\bwork\s+periods?\b/gi,
];

/** The work-history references of `markdown`, outside code blocks and code spans. */
export function workHistoryReferences(markdown: string): WorkHistoryReference[] {
  let fence: string | undefined;
  const prose = markdown
    .split('\n')
    .map((text) => {
      const fenceMark = /^\s*(```|~~~)/.exec(text)?.[1];
      if (fenceMark !== undefined) {
        if (fence === undefined) fence = fenceMark;
        else if (fence === fenceMark) fence = undefined;
        return '';
      }
      return fence === undefined ? text.replace(/(`+)[^`]*?\1/g, '') : '';
    })
    .join('\n');
  const found: WorkHistoryReference[] = [];
  for (const pattern of patterns) {
    for (const match of prose.matchAll(pattern)) {
      const line = prose.slice(0, match.index).split('\n').length;
      found.push({ text: match[0].replace(/\s+/g, ' '), line });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

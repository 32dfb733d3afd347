// The metric names a PromQL expression reads, so a test can check every alert against what an
// operator really exports. A small lexer, not a parser: it drops what cannot name a metric (strings,
// label matchers, ranges, grouping clauses, numbers, durations, keywords) and keeps every other
// identifier not called as a function.

const keywords = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** The metric names `expr` selects, each once, in order of appearance. */
export function metricNamesIn(expr: string): string[] {
  // A selector by __name__ would read a metric this lexer cannot see.
  if (expr.includes('__name__')) throw new Error(`${expr}: select by the metric's name, not __name__`);
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ')
    .replace(/\boffset\s+-?[0-9a-z]+/gi, ' ');
  const names: string[] = [];
  for (const match of bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (!name || call || keywords.has(name.toLowerCase())) continue;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

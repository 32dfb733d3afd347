// Reads Prometheus text exposition (what /metrics serves, from the API server and from both
// operators) just far enough to sum counters by label.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of a text exposition; comments and blank lines are skipped. */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = sampleLine.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(labelPair)) {
      if (key !== undefined && value !== undefined) labels[key] = value.replace(/\\(.)/g, '$1');
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of `name`'s samples whose labels pass `where`. */
export function sumOf(
  samples: readonly Sample[],
  name: string,
  where: (labels: Record<string, string>) => boolean = () => true,
): number {
  return samples.filter((s) => s.name === name && where(s.labels)).reduce((sum, s) => sum + s.value, 0);
}

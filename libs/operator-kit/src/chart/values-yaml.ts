// values.yaml from the values schema: every key with its default, its description as a comment.
// A closed object is written key by key; anything else (a scalar, a list, a pass-through
// Kubernetes object) is written as its `default`. Keys without a default are left out.
import { Document, isMap, isScalar, type Pair, type YAMLMap } from 'yaml';

interface SchemaNode {
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: unknown;
}

const isClosedObject = (node: SchemaNode): node is SchemaNode & { properties: Record<string, SchemaNode> } =>
  node.properties !== undefined && node.additionalProperties === false;

/** The defaults the schema describes, in its key order; undefined when it describes none. */
export function defaultsOf(node: SchemaNode): unknown {
  if (node.default !== undefined) return node.default;
  if (!isClosedObject(node)) return undefined;
  const entries = Object.entries(node.properties)
    .map(([key, child]) => [key, defaultsOf(child)] as const)
    .filter(([, value]) => value !== undefined);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

// Comments wrapped to fit the repository's line width; "# -- " marks a description (helm-docs' way).
function comment(description: string, indent: number): string {
  const width = 99 - indent; // the "#" makes it 100
  const lines: string[] = [];
  let line = ' --';
  for (const word of description.split(/\s+/)) {
    if (line.length + word.length + 1 > width && line.trim() !== '--') {
      lines.push(line);
      line = '';
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}

function describe(map: YAMLMap, schema: SchemaNode, indent: number, topLevel: boolean): void {
  for (const pair of map.items as Pair[]) {
    if (!isScalar(pair.key)) continue;
    const child = schema.properties?.[String(pair.key.value)];
    if (!child) continue;
    if (child.description) pair.key.commentBefore = comment(child.description, indent);
    if (topLevel) pair.key.spaceBefore = true;
    if (isClosedObject(child) && child.default === undefined && isMap(pair.value)) {
      describe(pair.value, child, indent + 2, false);
    }
  }
}

/** values.yaml text (before formatting) for `schema`, under a header comment. */
export function valuesYaml(schema: SchemaNode, header: string): string {
  const doc = new Document(defaultsOf(schema) ?? {});
  if (isMap(doc.contents)) describe(doc.contents, schema, 0, true);
  doc.commentBefore = header
    .split('\n')
    .map((l) => ` ${l}`)
    .join('\n');
  return doc.toString({ lineWidth: 0 });
}

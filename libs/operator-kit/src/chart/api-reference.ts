// The API reference page of a CRD, generated from the same OpenAPI schema the CRD carries (written
// once in TypeBox in each operator's src/api): every field with its type, default, bounds and
// description, and every rule the API server enforces with the message a user sees.
import type { CustomResourceDefinition } from '@homeostat/reconcile';
import { crdKind, type OperatorChart } from './operator-chart.ts';

/** The part of an OpenAPI v3 schema the reference reads. */
interface SchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  required?: readonly string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-validations'?: readonly { rule: string; message?: string; fieldPath?: string }[];
}

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: SchemaNode };
  additionalPrinterColumns?: readonly {
    name: string;
    jsonPath: string;
    description?: string;
    priority?: number;
  }[];
}

/** Where the reference page of `crd` lives, from the repository root. */
export function apiReferencePath(crd: CustomResourceDefinition): string {
  return `docs/reference/${crd.metadata.name}.md`;
}

/** The markdown reference page of one CRD of `chart` (unformatted; chartFiles formats it). */
export function apiReference(chart: OperatorChart, crd: CustomResourceDefinition): string {
  const kind = crdKind(crd);
  const group = String(crd.spec['group']);
  const versions = (crd.spec['versions'] ?? []) as readonly CrdVersion[];
  const lines = [
    `# ${kind} API reference`,
    '',
    `Generated from \`${chart.workspace}/src/api\` by \`npm run generate -w ${chart.workspace}\`; edit`,
    'the schema there, not this page. Installed by the',
    `[${chart.name} chart](../../charts/${chart.name}).`,
    '',
  ];
  for (const version of versions.filter((v) => v.served !== false)) {
    const root = version.schema?.openAPIV3Schema ?? {};
    lines.push(`## ${group}/${version.name}`, '');
    if (root.description) lines.push(root.description, '');
    lines.push(...printerColumns(version));
    for (const part of ['spec', 'status'] as const) {
      const node = root.properties?.[part];
      if (!node) continue;
      lines.push(`### ${part}`, '');
      if (node.description) lines.push(node.description, '');
      lines.push(...fields(part, node), '');
    }
    const rules = validations('', root);
    if (rules.length > 0) {
      lines.push('### Rules the API server enforces', '');
      lines.push('A create or update that breaks one is refused with its message.', '');
      lines.push(...rules, '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

function printerColumns(version: CrdVersion): string[] {
  const columns = version.additionalPrinterColumns ?? [];
  if (columns.length === 0) return [];
  return [
    '`kubectl get` shows:',
    '',
    ...columns.map(
      (c) =>
        `- **${c.name}** (\`${c.jsonPath}\`${c.priority ? ', with `-o wide`' : ''})${c.description ? `: ${c.description}` : ''}`,
    ),
    '',
  ];
}

/** One list entry per field below `node`, depth first, each with its full path. */
function fields(path: string, node: SchemaNode): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const childPath = `${path}.${name}`;
    const required = node.required?.includes(name) ? ', required' : '';
    out.push(
      `- \`${childPath}\` (${typeOf(child)}${required}${facts(child)})${child.description ? `: ${child.description}` : ''}`,
    );
    out.push(...fields(childPath, child));
    if (child.items) out.push(...fields(`${childPath}[]`, child.items));
    if (typeof child.additionalProperties === 'object')
      out.push(...fields(`${childPath}.<key>`, child.additionalProperties));
  }
  return out;
}

function typeOf(node: SchemaNode): string {
  if (node['x-kubernetes-int-or-string']) return 'integer or string';
  if (node.type === 'array') return `array of ${node.items ? typeOf(node.items) : 'any'}`;
  if (node.type === 'object' && typeof node.additionalProperties === 'object')
    return `map of ${typeOf(node.additionalProperties)}`;
  return node.format ? `${node.type ?? 'any'}, ${node.format}` : (node.type ?? 'any');
}

function facts(node: SchemaNode): string {
  const parts: string[] = [];
  if (node.default !== undefined) parts.push(`default ${inline(node.default)}`);
  if (node.enum) parts.push(`one of ${node.enum.map(inline).join(', ')}`);
  const range = (lo?: number, hi?: number, unit = '') => {
    const of = (n: number) => (unit === '' ? '' : ` ${unit}${n === 1 ? '' : 's'}`);
    if (lo !== undefined && hi !== undefined) return `${lo} to ${hi}${of(hi)}`;
    if (lo !== undefined) return `at least ${lo}${of(lo)}`;
    return hi !== undefined ? `at most ${hi}${of(hi)}` : undefined;
  };
  const bounds = [
    range(node.minimum, node.maximum),
    range(node.minLength, node.maxLength, 'character'),
    range(node.minItems, node.maxItems, 'item'),
  ].filter((b): b is string => b !== undefined);
  parts.push(...bounds);
  if (node.pattern) parts.push(`matching ${inline(node.pattern)}`);
  return parts.length > 0 ? `; ${parts.join('; ')}` : '';
}

function inline(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const fence = text.includes('`') ? '``' : '`';
  return `${fence}${fence.length > 1 ? ' ' : ''}${text}${fence.length > 1 ? ' ' : ''}${fence}`;
}

/** Every CEL rule in the schema, with the field it sits on and its message. */
function validations(path: string, node: SchemaNode): string[] {
  const here = (node['x-kubernetes-validations'] ?? []).map((v) => {
    const at = `${path}${v.fieldPath ?? ''}` || '(the object)';
    return `- on \`${at.replace(/^\./, '')}\`: ${v.message ?? `\`${v.rule}\``}`;
  });
  const below = Object.entries(node.properties ?? {}).flatMap(([name, child]) => [
    ...validations(`${path}.${name}`, child),
    ...(child.items ? validations(`${path}.${name}[]`, child.items) : []),
  ]);
  return [...here, ...below];
}

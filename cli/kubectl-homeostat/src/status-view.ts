// A resource's status at a glance, from the status alone: any Homeostat kind, today's fields and
// tomorrow's. Scalars first, one per line; each list of objects as a table (instances, members);
// conditions as a table with their age; other objects on one line each (last backup, operation).

/** A Homeostat custom resource as kubectl returns it. */
export interface Resource {
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number };
  status?: Record<string, unknown>;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

// What the status repeats from elsewhere, or only the scale subresource reads.
const hidden = new Set(['observedGeneration', 'selector', 'phase', 'conditions']);

/** "3m", "2h", "4d": how long ago `time` was, as kubectl prints ages. */
export function age(time: string | undefined, now: number): string {
  if (!time) return '';
  const seconds = Math.max(0, Math.round((now - Date.parse(time)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** "instanceStatuses" → "Instance statuses". */
function title(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (isScalar(v)) return String(v);
  if (Array.isArray(v)) return v.map(cell).join(',');
  return JSON.stringify(v);
}

/** Columns padded to their widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

function objectLine(value: Record<string, unknown>): string {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined && v !== null && !isRecord(v))
    .map(([k, v]) => `${k}=${cell(v)}`)
    .join(', ');
}

function objectsTable(items: readonly Record<string, unknown>[]): string[] {
  // The name first, whatever order the operator wrote the fields in; then FENCED, only when an
  // instance is fenced by request: the one thing about it that matters before its role or lag.
  const fenced = (item: Record<string, unknown>) => item['fenced'] === true;
  const columns: string[] = items.some((item) => 'name' in item) ? ['name'] : [];
  if (items.some(fenced)) columns.push('fenced');
  for (const item of items)
    for (const [key, value] of Object.entries(item))
      if (!columns.includes(key) && key !== 'fenced' && !isRecord(value)) columns.push(key);
  return table(
    columns.map((c) => title(c).toUpperCase()),
    items.map((item) => columns.map((c) => (c === 'fenced' ? (fenced(item) ? 'yes' : '') : cell(item[c])))),
  );
}

function conditionsTable(conditions: readonly Condition[], now: number): string[] {
  return table(
    ['TYPE', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
    conditions.map((c) => [
      c.type,
      c.status,
      c.reason ?? '',
      age(c.lastTransitionTime, now),
      c.message ?? '',
    ]),
  );
}

function isCondition(v: unknown): v is Condition {
  return isRecord(v) && typeof v['type'] === 'string' && typeof v['status'] === 'string';
}

/** The conditions of a status, those well-formed. */
export function conditionsOf(status: Record<string, unknown>): Condition[] {
  const conditions = status['conditions'];
  return Array.isArray(conditions) ? conditions.filter(isCondition) : [];
}

/** The status of `resource`, as lines for a terminal. */
export function statusView(resource: Resource, now = Date.now()): string[] {
  const status = resource.status ?? {};
  const name = resource.metadata?.name ?? '?';
  const where = resource.metadata?.namespace ? `, namespace ${resource.metadata.namespace}` : '';
  const phase = typeof status['phase'] === 'string' ? `: ${status['phase']}` : '';
  const lines = [`${name} (${resource.kind ?? 'resource'}${where})${phase}`];
  const observed = status['observedGeneration'];
  const generation = resource.metadata?.generation;
  if (typeof observed === 'number' && generation !== undefined && observed < generation)
    lines.push(
      `  (status of generation ${observed}; the spec is at ${generation}: the operator has not caught up)`,
    );
  if (Object.keys(status).length === 0) lines.push('  no status yet: the operator has not reconciled it');

  const scalars = Object.entries(status).filter(([k, v]) => !hidden.has(k) && isScalar(v));
  const width = Math.max(0, ...scalars.map(([k]) => k.length));
  for (const [key, value] of scalars) lines.push(`  ${key.padEnd(width)}  ${cell(value)}`);

  for (const [key, value] of Object.entries(status)) {
    if (hidden.has(key)) continue;
    if (isRecord(value)) lines.push('', `${title(key)}: ${objectLine(value)}`);
    else if (Array.isArray(value) && value.length > 0 && value.every(isRecord))
      lines.push('', `${title(key)}:`, ...objectsTable(value).map((l) => `  ${l}`));
    else if (Array.isArray(value) && value.length > 0) lines.push(`  ${key}: ${cell(value)}`);
  }
  const conditions = conditionsOf(status);
  if (conditions.length > 0)
    lines.push('', 'Conditions:', ...conditionsTable(conditions, now).map((l) => `  ${l}`));
  return lines;
}

/** One line per resource: what `status` without a name prints. */
export function summaryTable(resources: readonly Resource[]): string[] {
  return table(
    ['KIND', 'NAME', 'PHASE'],
    resources.map((r) => [r.kind ?? '', r.metadata?.name ?? '', cell(r.status?.['phase'])]),
  );
}

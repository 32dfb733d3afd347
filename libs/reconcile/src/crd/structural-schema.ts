/** A JSON Schema node as a CRD's openAPIV3Schema holds it. */
export type JsonSchema = { [key: string]: unknown };

const valueOnly = new Set(['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields']);

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Rewrites a TypeBox-made JSON Schema into the dialect CRDs accept: drops `$id`/`$schema`, turns
 * unions of literals and `const` into `enum`, a `Record`'s `patternProperties` into
 * `additionalProperties`, and removes `additionalProperties: false` (a structural schema prunes
 * unknown fields anyway).
 */
export function toCrdSchema(schema: unknown): JsonSchema {
  if (!isObject(schema)) throw new Error('a schema must be an object');
  // JSON round trip: drops TypeBox's symbol-keyed metadata and copies the tree.
  return rewrite(JSON.parse(JSON.stringify(schema)) as JsonSchema);
}

function rewrite(node: JsonSchema): JsonSchema {
  delete node['$id'];
  delete node['$schema'];
  const literals = (node['anyOf'] ?? node['oneOf']) as JsonSchema[] | undefined;
  if (Array.isArray(literals) && literals.length > 0 && literals.every((l) => isObject(l) && 'const' in l)) {
    const values = literals.map((l) => l['const']);
    const types = new Set(values.map((v) => (Number.isInteger(v) ? 'integer' : typeof v)));
    if (types.size === 1) {
      delete node['anyOf'];
      delete node['oneOf'];
      node['type'] = [...types][0];
      node['enum'] = values;
    }
  }
  if ('const' in node) {
    const value = node['const'];
    delete node['const'];
    node['enum'] = [value];
    node['type'] ??= Number.isInteger(value) ? 'integer' : typeof value;
  }
  if (node['additionalProperties'] === false) delete node['additionalProperties'];
  const patterns = node['patternProperties'];
  if (isObject(patterns)) {
    const values = Object.values(patterns);
    if (values.length === 1) {
      delete node['patternProperties'];
      node['additionalProperties'] = values[0];
    }
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value)) {
      for (const [name, child] of Object.entries(value)) if (isObject(child)) value[name] = rewrite(child);
    } else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) {
      node[key] = rewrite(value);
    }
  }
  // A field with a default is never missing: the API server fills it in before validating. Listed
  // as required, it would still make kubectl's client-side validation reject every manifest that
  // leaves it out, which is exactly what a default is for.
  const properties = node['properties'];
  if (Array.isArray(node['required']) && isObject(properties)) {
    const required = (node['required'] as string[]).filter((name) => {
      const property = properties[name];
      return !(isObject(property) && 'default' in property);
    });
    if (required.length) node['required'] = required;
    else delete node['required'];
  }
  return node;
}

/**
 * Checks the rules of a structural schema (apiextensions.k8s.io/v1): every node has a `type`
 * (unless int-or-string or preserve-unknown-fields), no `$ref`, no type-carrying `anyOf`/`oneOf`/
 * `allOf`/`not`, and objects describe their fields with `properties` or `additionalProperties`,
 * not both. Returns the problems, each with its path; empty when the schema is structural.
 */
export function structuralProblems(node: JsonSchema, path = '<root>'): string[] {
  const problems: string[] = [];
  if ('$ref' in node) problems.push(`${path}: $ref is not allowed in a CRD schema`);
  if (!('type' in node) && !Object.keys(node).some((k) => valueOnly.has(k))) {
    problems.push(
      `${path}: every node needs a type (or x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields)`,
    );
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf', 'not']) {
    if (keyword in node)
      problems.push(
        `${path}: ${keyword} is not supported here; use enum, or a CEL rule (x-kubernetes-validations)`,
      );
  }
  if (node['type'] === 'object' && isObject(node['properties']) && isObject(node['additionalProperties'])) {
    problems.push(`${path}: properties and additionalProperties are mutually exclusive`);
  }
  if (isObject(node['properties'])) {
    for (const [name, child] of Object.entries(node['properties'])) {
      if (isObject(child)) problems.push(...structuralProblems(child, `${path}.${name}`));
    }
  }
  if (isObject(node['items'])) problems.push(...structuralProblems(node['items'], `${path}[*]`));
  if (node['type'] === 'array' && !isObject(node['items'])) problems.push(`${path}: an array needs items`);
  if (isObject(node['additionalProperties']))
    problems.push(...structuralProblems(node['additionalProperties'], `${path}.*`));
  return problems;
}

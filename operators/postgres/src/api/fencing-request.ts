// Fencing on request: a person stops PostgreSQL in some instances of a cluster (to inspect a
// suspect instance's data as it is, or to stop all writes at once) without losing the pods or
// their volumes. Asked with an annotation on the PostgreSQLCluster, as CloudNativePG users know it
// (`cnpg.io/fencedInstances`): a state, not an event, but not part of the spec either, so a GitOps
// tool that owns the spec does not undo it (ADR 0223).

/** The annotation that lists the instances to fence: a JSON array of names, or `["*"]` for all. */
export const fencedInstancesAnnotation = 'postgres.homeostat.dev/fencedInstances';

/** What the annotation asks for, or why it cannot be read. */
export type FencingRequest =
  | { readonly valid: true; readonly instances: readonly string[] | 'all' }
  | { readonly valid: false; readonly problem: string };

/** Reads the annotation's value: absent or `[]` fences nothing. */
export function parseFencingRequest(value: string | undefined): FencingRequest {
  if (value === undefined || value.trim() === '') return { valid: true, instances: [] };
  const problem = `${fencedInstancesAnnotation} must be a JSON array of instance names, or ["*"] for every instance, not ${JSON.stringify(value)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { valid: false, problem };
  }
  if (!Array.isArray(parsed) || !parsed.every((n): n is string => typeof n === 'string' && n !== '')) {
    return { valid: false, problem };
  }
  if (parsed.includes('*')) {
    return parsed.length === 1
      ? { valid: true, instances: 'all' }
      : { valid: false, problem: `${problem}: "*" stands alone` };
  }
  return { valid: true, instances: [...new Set(parsed)].sort() };
}

import { Type } from '@sinclair/typebox';

/** The TypeBox schema of a condition, for CRD status schemas (a list keyed by `type`). */
export const ConditionSchema = Type.Object({
  type: Type.String({ maxLength: 316 }),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  reason: Type.String({ maxLength: 1024 }),
  message: Type.String({ maxLength: 32768 }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
});

/** The TypeBox schema of a `conditions` list: a map keyed by type, as Kubernetes declares it. */
export const ConditionsSchema = Type.Array(ConditionSchema, {
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

/** A KEP-1623 condition, as `metav1.Condition`. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** CamelCase reason. */
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

function nowSeconds(now: Date): string {
  // metav1.Time has second precision; keeping it avoids spurious diffs.
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Returns `conditions` with `input` set for `observedGeneration`. lastTransitionTime moves only
 * when the status changes, so an unchanged condition yields an equal list (and no write).
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number | undefined,
  now: Date = new Date(),
): Condition[] {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(input.reason)) {
    throw new Error(`condition ${input.type}: reason "${input.reason}" must be CamelCase`);
  }
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index === -1 ? undefined : list[index];
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : nowSeconds(now),
  };
  if (index === -1) list.push(next);
  else list[index] = next;
  return list;
}

/** The condition of `type`, if present. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` has status True. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

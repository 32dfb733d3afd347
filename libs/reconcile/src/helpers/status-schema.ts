// The fields a custom resource's status starts with, said once so every operator's CRD describes
// them the same way (KEP-1623: the generation a status describes, and conditions keyed by type).
import {
  Type,
  type TArray,
  type TInteger,
  type TLiteral,
  type TOptional,
  type TUnion,
} from '@sinclair/typebox';
import { ConditionSchema } from './conditions.ts';

/** `status.observedGeneration`: which `metadata.generation` the status describes. */
export function observedGenerationField(): TOptional<TInteger> {
  return Type.Optional(Type.Integer({ description: 'The metadata.generation this status describes.' }));
}

/**
 * `status.phase`: one word out of `phases` for a person scanning `kubectl get`; the conditions
 * carry the reasons, so `description` should say so.
 */
export function phaseField<const P extends string>(
  phases: readonly P[],
  description: string,
): TOptional<TUnion<TLiteral<P>[]>> {
  return Type.Optional(
    Type.Union(
      phases.map((p) => Type.Literal(p)),
      { description },
    ),
  );
}

/** `status.conditions`: a list keyed by `type`, as Kubernetes declares `[]metav1.Condition`. */
export function conditionsField(description: string): TOptional<TArray<typeof ConditionSchema>> {
  return Type.Optional(
    Type.Array(ConditionSchema, {
      description,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  );
}

// TypeBox schemas of the core/v1 pieces operators put in their specs (quantities, resource
// requirements, tolerations, affinity), with the CEL rules that give their errors a readable message.
import { Type } from '@sinclair/typebox';
import type { ValidationRule } from './crd-builder.ts';

/**
 * A Kubernetes quantity. Kept a string (never int-or-string) so CEL's `isQuantity()` can check it
 * and `quantity()` can compare it in other rules.
 */
export function quantitySchema(description: string) {
  return Type.String({
    maxLength: 64,
    description,
    'x-kubernetes-validations': [
      { rule: 'isQuantity(self)', message: 'must be a Kubernetes quantity such as 128Mi, 1Gi, 250m or 1' },
    ],
  });
}

function resourceList(what: string) {
  return Type.Object(
    {
      cpu: Type.Optional(quantitySchema(`CPU ${what}, e.g. 100m.`)),
      memory: Type.Optional(quantitySchema(`Memory ${what}, e.g. 128Mi.`)),
    },
    { description: `Resource ${what}.` },
  );
}

/** CPU and memory requests and limits of a container (core/v1 ResourceRequirements, cpu and memory only). */
export function resourceRequirementsSchema(description: string) {
  return Type.Object(
    { requests: Type.Optional(resourceList('requests')), limits: Type.Optional(resourceList('limits')) },
    { description },
  );
}

/**
 * CEL rules, for the object that holds a `resources` field made by `resourceRequirementsSchema`,
 * refusing requests larger than limits (the API server would refuse the pod, too late for the user).
 */
export function requestsWithinLimitsRules(field = 'resources'): ValidationRule[] {
  return (['memory', 'cpu'] as const).map((resource) => ({
    rule: `!has(self.${field}) || !has(self.${field}.limits) || !has(self.${field}.requests) || !has(self.${field}.limits.${resource}) || !has(self.${field}.requests.${resource}) || !quantity(self.${field}.requests.${resource}).isGreaterThan(quantity(self.${field}.limits.${resource}))`,
    message: `${field}.requests.${resource} must not be larger than ${field}.limits.${resource}`,
    fieldPath: `.${field}.requests.${resource}`,
  }));
}

/** A container image reference: no whitespace, within what registries and the kubelet accept. */
export function imageSchema(description: string) {
  return Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\s]+$', description });
}

/** A core/v1 Toleration. */
export const TolerationSchema = Type.Object({
  key: Type.Optional(Type.String({ maxLength: 316 })),
  operator: Type.Optional(Type.Union([Type.Literal('Exists'), Type.Literal('Equal')])),
  value: Type.Optional(Type.String({ maxLength: 63 })),
  effect: Type.Optional(
    Type.Union([Type.Literal('NoSchedule'), Type.Literal('PreferNoSchedule'), Type.Literal('NoExecute')]),
  ),
  tolerationSeconds: Type.Optional(Type.Integer()),
});

// A label value (63 characters at most, alphanumeric at both ends) and a label key (an optional
// DNS-subdomain prefix and a name like a value, not empty): what the API server accepts in labels
// and selectors.
const labelValuePattern = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const labelKeyPattern =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';

/**
 * A meta/v1 LabelSelector, with rules so that a selector the API server would refuse later (on
 * the object made from it) is refused here, naming the field: keys and values in label syntax, In
 * and NotIn with values, Exists and DoesNotExist without.
 */
export function labelSelectorSchema(description: string) {
  return Type.Object(
    {
      matchLabels: Type.Optional(
        Type.Record(
          Type.String({ maxLength: 316 }),
          Type.String({ maxLength: 63, pattern: labelValuePattern }),
          {
            maxProperties: 32,
            'x-kubernetes-validations': [
              {
                rule: `self.all(k, k.matches(r'${labelKeyPattern}'))`,
                message:
                  'label keys must be a name of letters, digits, "-", "_" and "." starting and ending with a letter or digit, optionally prefixed by a DNS subdomain and "/"',
              },
            ],
          },
        ),
      ),
      matchExpressions: Type.Optional(
        Type.Array(
          Type.Object(
            {
              key: Type.String({ minLength: 1, maxLength: 316, pattern: labelKeyPattern }),
              operator: Type.Union([
                Type.Literal('In'),
                Type.Literal('NotIn'),
                Type.Literal('Exists'),
                Type.Literal('DoesNotExist'),
              ]),
              values: Type.Optional(
                Type.Array(Type.String({ maxLength: 63, pattern: labelValuePattern }), { maxItems: 64 }),
              ),
            },
            {
              'x-kubernetes-validations': [
                {
                  rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
                  message: 'values must name at least one value for the operators In and NotIn',
                  fieldPath: '.values',
                },
                {
                  rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
                  message: 'values must be empty for the operators Exists and DoesNotExist',
                  fieldPath: '.values',
                },
              ],
            },
          ),
          { maxItems: 16 },
        ),
      ),
    },
    { description },
  );
}

/**
 * A core/v1 Affinity, kept as written (its schema is large and the pod's own validation checks it);
 * an operator that passes it to pods reports what the API server refuses.
 */
export function affinitySchema(description: string) {
  return Type.Object({}, { 'x-kubernetes-preserve-unknown-fields': true, description });
}

/**
 * Refuses an object without `spec` (a CRD's spec schema alone accepts an object that omits it):
 * put it in a version's `validations`, which apply to the whole object.
 */
export const specRequiredRule: ValidationRule = {
  rule: 'has(self.spec)',
  message: 'spec is required (at least spec: {} for the defaults)',
  fieldPath: '.spec',
  reason: 'FieldValueRequired',
};

/**
 * Keeps metadata.name a DNS label starting with a letter, for an operator that builds Service,
 * pod or label names from it; `names` ends the message ("it names the Service"). Pair it with
 * buildCrd's `nameMaxLength`, which keeps the rule within the API server's CEL cost budget.
 */
export function dnsLabelNameRule(names: string): ValidationRule {
  return {
    rule: "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
    message: `metadata.name must be lowercase letters, digits and "-", starting with a letter: ${names}`,
    fieldPath: '.metadata.name',
  };
}

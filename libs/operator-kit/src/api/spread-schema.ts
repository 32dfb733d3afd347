// How an operator's pods are spread over topology domains (nodes, zones): one small shape for every
// operator's spec, turned into a pod's topologySpreadConstraints by scheduling/topology-spread.ts.
import { Type } from '@sinclair/typebox';

export type SpreadPolicy = 'Preferred' | 'Required' | 'Disabled';

export interface SpreadTerms {
  /** What the pods are, in the descriptions: "members", "cache pods". */
  readonly pods: string;
  readonly defaultPolicy: SpreadPolicy;
  /** The whole field's description. */
  readonly description: string;
}

/** `{ policy, topologyKey }`, defaulted as a whole (`spread: {}` gets the defaults). */
export function spreadSchema({ pods, defaultPolicy, description }: SpreadTerms) {
  return Type.Object(
    {
      policy: Type.Union([Type.Literal('Preferred'), Type.Literal('Required'), Type.Literal('Disabled')], {
        default: defaultPolicy,
        description: `Preferred: ${pods} go to different topology domains when they can (they still start on a single node). Required: a pod stays Pending rather than leave the ${pods} unevenly spread by more than one (with fewer domains than pods, some share one). Disabled: no spreading rule.`,
      }),
      topologyKey: Type.String({
        minLength: 1,
        maxLength: 316,
        default: 'kubernetes.io/hostname',
        description:
          'Node label whose values are the domains to spread across, e.g. topology.kubernetes.io/zone.',
      }),
    },
    { default: {}, description },
  );
}

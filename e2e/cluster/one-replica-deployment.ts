// The Deployment every single-instance workload of the local cluster and of the suites is: one
// replica whose pods carry the Deployment's labels, which also select them.
export interface OneReplicaDeployment {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** The pod template's spec. */
  podSpec: Record<string, unknown>;
}

/** An apps/v1 Deployment object for `apply`. */
export function oneReplicaDeployment({ name, namespace, labels, podSpec }: OneReplicaDeployment): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec },
    },
  };
}

// A complete operator: each Greeting gets a ConfigMap holding its message, and a Ready condition.
import { Type, type Static } from '@sinclair/typebox';
import {
  Manager,
  ConditionsSchema,
  buildCrd,
  builtin,
  controllerReference,
  generationChanged,
  loadKubeConfig,
  resourceType,
  setCondition,
  type ClusterSource,
  type Condition,
  type KubeObject,
} from '@homeostat/reconcile';

const GreetingSpec = Type.Object({ message: Type.String({ minLength: 1, maxLength: 200 }) });
const GreetingStatus = Type.Object({ observedGeneration: Type.Integer(), conditions: ConditionsSchema });
interface Greeting extends KubeObject {
  spec: Static<typeof GreetingSpec>;
  status?: { observedGeneration: number; conditions: Condition[] };
}
export const greetings = resourceType<Greeting>('example.homeostat.dev/v1', 'Greeting', 'greetings');
/** The CRD to install (operators render it into their chart). */
export const greetingCrd = buildCrd({
  group: 'example.homeostat.dev',
  kind: 'Greeting',
  plural: 'greetings',
  versions: [{ name: 'v1', spec: GreetingSpec, status: Type.Partial(GreetingStatus) }],
});

/** The operator: a manager with one controller, not yet started. */
export function greetingOperator(kubeConfig: ClusterSource): Manager {
  const manager = new Manager({
    kubeConfig,
    name: 'greeting-operator',
    healthPort: 8081,
    metricsPort: 8080,
    leaderElection: { namespace: process.env['POD_NAMESPACE'] ?? 'default', leaseName: 'greeting-operator' },
  });
  manager.controller({
    name: 'greeting',
    for: greetings,
    owns: [builtin.configMaps],
    predicates: [generationChanged],
    async reconcile({ namespace = 'default', name, object: greeting }, { cache, client, events }) {
      if (!greeting) return; // deleted: garbage collection removes the ConfigMap
      const configMap = {
        metadata: { name, namespace, ownerReferences: [controllerReference(greeting)] },
        data: { message: greeting.spec.message },
      };
      // No request when the cached ConfigMap already matches; a dropped field counts as a change.
      const live = cache.get(builtin.configMaps, name, namespace);
      const { written } = await client.applyIfChanged(builtin.configMaps, configMap, live);
      if (written) await events.normal(greeting, 'ConfigMapWritten', 'Reconcile', `wrote ConfigMap ${name}`);
      const generation = greeting.metadata?.generation ?? 0;
      const ready = { type: 'Ready', status: 'True', reason: 'ConfigMapWritten', message: '' } as const;
      const status = {
        observedGeneration: generation,
        conditions: setCondition(greeting.status?.conditions, ready, generation),
      };
      await client.applyStatusIfChanged(greetings, { metadata: { name, namespace }, status }, greeting);
    },
  });
  return manager;
}

if (import.meta.main) {
  // $KUBECONFIG, ~/.kube/config, or the pod's service account.
  const manager = greetingOperator(await loadKubeConfig());
  manager.stopOnSignals();
  await manager.start();
}

// A complete operator: each Greeting gets a ConfigMap holding its message, and a Ready condition.
import { Type, type Static } from '@sinclair/typebox';
import { KubeConfig } from '@kubernetes/client-node';
import {
  Manager, ConditionsSchema, buildCrd, builtin, controllerReference, generationChanged, isSubset, resourceType,
  setCondition, type Condition, type KubeObject,
} from '@homeostat/reconcile';

const GreetingSpec = Type.Object({ message: Type.String({ minLength: 1, maxLength: 200 }) });
const GreetingStatus = Type.Object({ observedGeneration: Type.Optional(Type.Integer()), conditions: Type.Optional(ConditionsSchema) });
interface Greeting extends KubeObject {
  spec: Static<typeof GreetingSpec>;
  status?: { observedGeneration?: number; conditions?: Condition[] };
}
export const greetings = resourceType<Greeting>('example.homeostat.dev/v1', 'Greeting', 'greetings');
/** The CRD to install (operators render it into their chart). */
export const greetingCrd = buildCrd({
  group: 'example.homeostat.dev', kind: 'Greeting', plural: 'greetings',
  versions: [{ name: 'v1', spec: GreetingSpec, status: GreetingStatus }],
});

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const manager = new Manager({
  kubeConfig, name: 'greeting-operator', healthPort: 8081, metricsPort: 8080,
  leaderElection: { namespace: process.env['POD_NAMESPACE'] ?? 'default', leaseName: 'greeting-operator' },
});
manager.controller({
  name: 'greeting', for: greetings, owns: [builtin.configMaps], predicates: [generationChanged],
  async reconcile({ namespace = 'default', name }, { cache, client, events }) {
    const greeting = cache.get(greetings, name, namespace);
    if (!greeting) return; // deleted: garbage collection removes the ConfigMap
    const configMap = {
      metadata: { name, namespace, ownerReferences: [controllerReference(greeting)] },
      data: { message: greeting.spec.message },
    };
    if (!isSubset(configMap, cache.get(builtin.configMaps, name, namespace))) {
      await client.apply(builtin.configMaps, configMap);
      await events.normal(greeting, 'ConfigMapWritten', 'Reconcile', `wrote ConfigMap ${name}`);
    }
    const generation = greeting.metadata?.generation ?? 0;
    const status = {
      observedGeneration: generation,
      conditions: setCondition(greeting.status?.conditions, { type: 'Ready', status: 'True', reason: 'ConfigMapWritten', message: '' }, generation),
    };
    if (!isSubset(status, greeting.status)) await client.applyStatus(greetings, { metadata: { name, namespace }, spec: greeting.spec, status });
  },
});
if (import.meta.main) {
  manager.stopOnSignals();
  await manager.start();
}

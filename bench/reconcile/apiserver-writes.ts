// The writes the API server served on the Widget workload's kinds, read from its own request
// counter (apiserver_request_total). One third party counts both operators the same way, whatever
// their client libraries report about themselves (ADR 0600).
import type { IncomingMessage } from 'node:http';
import type { KubeClient } from '@homeostat/reconcile';
import { parseSamples, sumOf } from './prometheus-text.ts';

const mutatingVerbs = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION']);
// Widgets (and their status), the ConfigMaps they own, and Events (core and events.k8s.io).
const workloadResources = new Set(['widgets', 'configmaps', 'events']);

/** Writes served so far, on every namespace, to Widgets, ConfigMaps and Events. */
export async function workloadWrites(client: KubeClient): Promise<number> {
  const response = await client.transport.stream({ method: 'GET', path: '/metrics' });
  return sumOf(
    parseSamples(await readText(response)),
    'apiserver_request_total',
    (labels) => mutatingVerbs.has(labels['verb'] ?? '') && workloadResources.has(labels['resource'] ?? ''),
  );
}

async function readText(response: IncomingMessage): Promise<string> {
  let text = '';
  response.setEncoding('utf8');
  for await (const chunk of response) text += chunk as string;
  return text;
}

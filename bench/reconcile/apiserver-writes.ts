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

/** Seconds the API server spent serving those writes, and how many it served (a histogram's sum and count). */
export interface ServedWrites {
  seconds: number;
  count: number;
}

/**
 * The API server's own time for the writes of the workload so far (apiserver_request_duration_seconds):
 * taken before and after a run, it says whether an operator's requests cost the server more, or
 * wait longer on the operator's side.
 */
export async function workloadWriteTime(client: KubeClient): Promise<ServedWrites> {
  const response = await client.transport.stream({ method: 'GET', path: '/metrics' });
  const samples = parseSamples(await readText(response));
  const isWorkloadWrite = (labels: Record<string, string>) =>
    mutatingVerbs.has(labels['verb'] ?? '') && workloadResources.has(labels['resource'] ?? '');
  return {
    seconds: sumOf(samples, 'apiserver_request_duration_seconds_sum', isWorkloadWrite),
    count: sumOf(samples, 'apiserver_request_duration_seconds_count', isWorkloadWrite),
  };
}

async function readText(response: IncomingMessage): Promise<string> {
  let text = '';
  response.setEncoding('utf8');
  for await (const chunk of response) text += chunk as string;
  return text;
}

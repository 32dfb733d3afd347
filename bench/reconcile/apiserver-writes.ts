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
  /** The same by request kind ("APPLY configmaps", "APPLY widgets/status", "POST events"). */
  byRequest: Map<string, { seconds: number; count: number }>;
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
  const byRequest = new Map<string, { seconds: number; count: number }>();
  for (const sample of samples) {
    const sum = sample.name === 'apiserver_request_duration_seconds_sum';
    if (!(sum || sample.name === 'apiserver_request_duration_seconds_count')) continue;
    if (!isWorkloadWrite(sample.labels)) continue;
    const { verb = '', resource = '', subresource = '' } = sample.labels;
    const key = `${verb} ${resource}${subresource ? `/${subresource}` : ''}`;
    const entry = byRequest.get(key) ?? { seconds: 0, count: 0 };
    if (sum) entry.seconds += sample.value;
    else entry.count += sample.value;
    byRequest.set(key, entry);
  }
  // The totals are the sums of the per-request figures: one pass over the samples.
  const entries = [...byRequest.values()];
  return {
    seconds: entries.reduce((sum, e) => sum + e.seconds, 0),
    count: entries.reduce((sum, e) => sum + e.count, 0),
    byRequest,
  };
}

/** The API server's mean ms per request kind between two readings, e.g. "APPLY configmaps 5.12 ms x 1000". */
export function writeTimeByRequest(before: ServedWrites, after: ServedWrites): string[] {
  const lines: string[] = [];
  for (const [key, now] of after.byRequest) {
    const then = before.byRequest.get(key) ?? { seconds: 0, count: 0 };
    const count = now.count - then.count;
    if (count > 0)
      lines.push(`${key} ${(((now.seconds - then.seconds) * 1000) / count).toFixed(2)} ms x ${count}`);
  }
  return lines.sort();
}

async function readText(response: IncomingMessage): Promise<string> {
  let text = '';
  response.setEncoding('utf8');
  for await (const chunk of response) text += chunk as string;
  return text;
}

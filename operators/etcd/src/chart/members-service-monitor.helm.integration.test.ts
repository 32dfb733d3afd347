// The chart's opt-in ServiceMonitor for the etcd members' own /metrics, rendered by the real helm:
// it selects the peer Service the operator makes for every EtcdCluster (compared with the object
// the controller builds, so the two cannot drift apart) on its metrics port, in the watched
// namespaces, and is absent unless asked for.
import { helmTemplate, renderedObjects, type RenderedObject } from '@homeostat/operator-kit/testing';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { desiredClientService, desiredPeerService } from '../controllers/desired-services.ts';
import { etcdChart } from './etcd-chart.ts';

type Monitor = RenderedObject & {
  metadata: { labels: Record<string, string> };
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { any?: boolean; matchNames?: string[] };
    endpoints: { port: string; path: string; interval: string }[];
  };
};

const render = (...args: string[]) => {
  const out = helmTemplate(etcdChart, 'etcd-operator', 'etcd-system', args);
  expect(out.stderr).toBe('');
  return renderedObjects(out.stdout).filter((d) => d.kind === 'ServiceMonitor') as Monitor[];
};
const cluster = {
  apiVersion: 'etcd.homeostat.dev/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'orders', namespace: 'shop', uid: 'u' },
  spec: { size: 3 },
} as unknown as EtcdCluster;
const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe("etcd-operator chart: the members' ServiceMonitor", () => {
  it('is absent unless membersServiceMonitor.enabled', () => {
    expect(render()).toEqual([]);
  });

  it("scrapes the metrics port of every cluster's peer Service, in every namespace or the watched ones", () => {
    const [monitor, ...others] = render(
      '--set',
      'membersServiceMonitor.enabled=true',
      '--set',
      'membersServiceMonitor.labels.release=kps',
    );
    expect(others).toEqual([]);
    const peers = desiredPeerService(cluster);
    expect(matches(monitor?.spec.selector.matchLabels ?? {}, peers.metadata?.labels)).toBe(true);
    expect(peers.spec?.ports?.map((p) => p.name)).toContain(monitor?.spec.endpoints[0]?.port);
    // The client Service matches the selector too but has no metrics port, so it is not scraped.
    expect(desiredClientService(cluster).spec?.ports?.map((p) => p.name)).not.toContain('metrics');
    expect(monitor?.spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics', interval: '30s' });
    expect(monitor?.spec.namespaceSelector).toEqual({ any: true });
    expect(monitor?.metadata.labels['release']).toBe('kps');
    const [scoped] = render(
      '--set',
      'membersServiceMonitor.enabled=true',
      '--set-json',
      'watchNamespaces=["shop"]',
    );
    expect(scoped?.spec.namespaceSelector).toEqual({ matchNames: ['shop'] });
  });
});

// The desired-object builders are pure: an EtcdCluster (as the API server returns it, defaults
// filled in) and the member's inputs in, the object out.
import { describe, expect, it } from 'vitest';
import type { V1OwnerReference } from '@kubernetes/client-node';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { testCluster } from '../test-support/test-cluster.ts';
import { claimOwnersToWrite, heldByAnother } from './claim-retention.ts';
import { desiredMemberNames, memberName, ordinalOf } from './cluster-names.ts';
import { claimMemberId, desiredMemberClaim } from './desired-member-claim.ts';
import {
  acceptsOnlyPeers,
  desiredMemberPod,
  memberFlags,
  type MemberPodInput,
} from './desired-member-pod.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredClientService, desiredPeerService } from './desired-services.ts';
import { dnsAddressing } from './member-addressing.ts';

const cluster = testCluster;

const input = (overrides: Partial<MemberPodInput> = {}): MemberPodInput => ({
  member: 'orders-1',
  image: 'gcr.io/etcd-development/etcd:v3.6.16',
  urls: { peerUrl: 'http://orders-1.orders-peers.shop.svc.cluster.local:2380', clientUrl: 'http://c:2379' },
  listen: { peer: 'http://0.0.0.0:2380', client: 'http://0.0.0.0:2379', metrics: 'http://0.0.0.0:2381' },
  join: { initialCluster: 'orders-0=http://a:2380,orders-1=http://b:2380', state: 'existing' },
  memberId: '8e9e05c52164694d',
  ...overrides,
});

describe('member names', () => {
  it('are <cluster>-<ordinal> for ordinals 0 … size-1, and parse back', () => {
    expect(desiredMemberNames(cluster({ size: 3 }))).toEqual(['orders-0', 'orders-1', 'orders-2']);
    expect(ordinalOf('orders', memberName('orders', 12))).toBe(12);
    expect(ordinalOf('orders', 'orders-01')).toBeUndefined();
    expect(ordinalOf('orders', 'orders-x')).toBeUndefined();
    expect(ordinalOf('orders', 'other-1')).toBeUndefined();
  });
});

describe('DNS addressing', () => {
  it('names members under the peers Service, https with TLS, and the client Service as the endpoint', async () => {
    const dns = dnsAddressing('cluster.local');
    expect(await dns.urls(cluster({ tls: { enabled: true } }), 'orders-2')).toEqual({
      peerUrl: 'https://orders-2.orders-peers.shop.svc.cluster.local:2380',
      clientUrl: 'https://orders-2.orders-peers.shop.svc.cluster.local:2379',
    });
    expect(await dns.listen(cluster(), 'orders-2')).toEqual({
      peer: 'http://0.0.0.0:2380',
      client: 'http://0.0.0.0:2379',
      metrics: 'http://0.0.0.0:2381',
    });
    expect(dns.clientEndpoint(cluster())).toBe('http://orders.shop.svc.cluster.local:2379');
    expect(dns.certificateNames(cluster())).toEqual({
      dnsNames: [
        '*.orders-peers.shop.svc',
        '*.orders-peers.shop.svc.cluster.local',
        'orders',
        'orders.shop',
        'orders.shop.svc',
        'orders.shop.svc.cluster.local',
        'localhost',
      ],
      ipAddresses: ['127.0.0.1'],
    });
  });
});

describe('member pod', () => {
  it('runs etcd with the flags of its identity and join', () => {
    expect(memberFlags(cluster(), input())).toEqual([
      '--name=orders-1',
      '--data-dir=/var/lib/etcd/data',
      '--listen-peer-urls=http://0.0.0.0:2380',
      '--listen-client-urls=http://0.0.0.0:2379',
      '--listen-metrics-urls=http://0.0.0.0:2381',
      '--initial-advertise-peer-urls=http://orders-1.orders-peers.shop.svc.cluster.local:2380',
      '--advertise-client-urls=http://c:2379',
      '--initial-cluster=orders-0=http://a:2380,orders-1=http://b:2380',
      '--initial-cluster-state=existing',
      '--initial-cluster-token=uid-1',
    ]);
  });

  it('mounts its claim, records its member ID, and spreads by default', () => {
    const pod = desiredMemberPod(cluster(), input());
    expect(pod.metadata?.annotations).toEqual({ 'etcd.homeostat.dev/member-id': '8e9e05c52164694d' });
    expect(pod.spec?.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'orders-1-data' } },
    ]);
    expect(pod.spec?.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        nodeTaintsPolicy: 'Honor',
        labelSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'etcd', 'app.kubernetes.io/instance': 'orders' },
        },
      },
    ]);
    expect(pod.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' } });
    expect(pod.spec).not.toHaveProperty('nodeSelector');
    expect(pod.spec).not.toHaveProperty('affinity');
  });

  it('spreads over the nodes members may run on: a node whose taint they do not tolerate is no domain', () => {
    // With the scheduler's default (nodeTaintsPolicy Ignore) a tainted control-plane node counts
    // as an empty domain: under Required, a 4th member on 3 workers would make the skew 2 and stay
    // Pending, where the spec promises that with fewer domains than members some share one.
    const pod = desiredMemberPod(
      cluster({ scheduling: { spread: { policy: 'Required', topologyKey: 'kubernetes.io/hostname' } } }),
      input(),
    );
    expect(pod.spec?.topologySpreadConstraints?.[0]).toMatchObject({
      whenUnsatisfiable: 'DoNotSchedule',
      nodeTaintsPolicy: 'Honor',
    });
  });

  it('takes the scheduling and resources of the spec', () => {
    const pod = desiredMemberPod(
      cluster({
        scheduling: {
          spread: { policy: 'Required', topologyKey: 'topology.kubernetes.io/zone' },
          nodeSelector: { disk: 'ssd' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'etcd', effect: 'NoSchedule' }],
          affinity: { nodeAffinity: {} },
          priorityClassName: 'critical',
        },
        resources: { limits: { memory: '1Gi' }, requests: { cpu: '2' } },
      }),
      input(),
    );
    expect(pod.spec?.topologySpreadConstraints?.[0]).toMatchObject({
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
    });
    expect(pod.spec).toMatchObject({
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated' }],
      affinity: { nodeAffinity: {} },
      priorityClassName: 'critical',
    });
    // A memory limit without a request is the request; the default would not fit under it.
    expect(pod.spec?.containers[0]?.resources).toEqual({
      requests: { cpu: '2', memory: '1Gi' },
      limits: { memory: '1Gi' },
    });
  });

  it('with TLS, serves clients and peers with the mounted Secrets and asks both for certificates', () => {
    const pod = desiredMemberPod(
      cluster({ tls: { enabled: true } }),
      input({ tls: { serverSecret: 's', peerSecret: 'p', peerCommonName: 'orders-peer' } }),
    );
    const args = pod.spec?.containers[0]?.args ?? [];
    expect(args.slice(10)).toEqual([
      '--cert-file=/etc/etcd/tls/server/tls.crt',
      '--key-file=/etc/etcd/tls/server/tls.key',
      '--trusted-ca-file=/etc/etcd/tls/server/ca.crt',
      '--client-cert-auth=true',
      '--peer-cert-file=/etc/etcd/tls/peer/tls.crt',
      '--peer-key-file=/etc/etcd/tls/peer/tls.key',
      '--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt',
      '--peer-client-cert-auth=true',
      '--peer-cert-allowed-cn=orders-peer',
      '--peer-skip-client-san-verification=true',
    ]);
    expect(acceptsOnlyPeers(pod)).toBe(true);
    expect(pod.spec?.volumes?.slice(1)).toEqual([
      { name: 'server-tls', secret: { secretName: 's', defaultMode: 0o440 } },
      { name: 'peer-tls', secret: { secretName: 'p', defaultMode: 0o440 } },
    ]);
  });

  it('has no spreading rule when asked for none', () => {
    const pod = desiredMemberPod(
      cluster({ scheduling: { spread: { policy: 'Disabled', topologyKey: 'kubernetes.io/hostname' } } }),
      input(),
    );
    expect(pod.spec).not.toHaveProperty('topologySpreadConstraints');
  });
});

describe('member pod under a restart request (homeostat.dev/restartedAt)', () => {
  it("carries the cluster's request, so a pod made under another one is behind", () => {
    const asked = cluster();
    asked.metadata = { ...asked.metadata, annotations: { [restartedAtAnnotation]: '2026-11-28T01:00:00Z' } };
    expect(desiredMemberPod(asked, input()).metadata?.annotations).toEqual({
      'etcd.homeostat.dev/member-id': '8e9e05c52164694d',
      'homeostat.dev/restartedAt': '2026-11-28T01:00:00Z',
    });
  });

  it('is the same pod as before without one (an upgraded operator restarts nothing)', () => {
    const other = cluster();
    other.metadata = { ...other.metadata, annotations: { 'example.test/note': 'x' } };
    expect(desiredMemberPod(other, input())).toEqual(desiredMemberPod(cluster(), input()));
  });
});

describe('member claim', () => {
  it('asks for the storage of the spec and records the member ID its data belongs to', () => {
    const claim = desiredMemberClaim(
      cluster({ storage: { size: '20Gi', storageClassName: 'fast', retention: 'Delete' } }),
      'orders-0',
      'seed',
    );
    expect(claim.metadata?.name).toBe('orders-0-data');
    expect(claimMemberId(claim)).toBe('seed');
    expect(claim.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '20Gi' } },
      storageClassName: 'fast',
    });
  });

  it('is controlled by the cluster under Delete, and owned by nothing under Retain', () => {
    const deleted = desiredMemberClaim(cluster(), 'orders-0', 'seed');
    expect(deleted.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'EtcdCluster', name: 'orders', uid: 'uid-1', controller: true }),
    ]);
    const retained = desiredMemberClaim(
      cluster({ storage: { size: '8Gi', retention: 'Retain' } }),
      'orders-0',
      'seed',
    );
    expect(retained.metadata).not.toHaveProperty('ownerReferences');
    expect(retained.metadata?.labels).toMatchObject({
      'app.kubernetes.io/instance': 'orders',
      'etcd.homeostat.dev/member': 'orders-0',
    });
  });
});

describe('claim retention', () => {
  const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'other', controller: false };
  const claim = (ownerReferences: V1OwnerReference[] | undefined) => ({
    metadata: { name: 'orders-0-data', ...(ownerReferences ? { ownerReferences } : {}) },
  });

  it('gives a claim the cluster as controller under Delete, and takes it away under Retain, keeping other owners', () => {
    const retain = cluster({ storage: { size: '8Gi', retention: 'Retain' } });
    const ours = desiredMemberClaim(cluster(), 'orders-0', 'seed').metadata?.ownerReferences ?? [];
    expect(claimOwnersToWrite(cluster(), claim(undefined))).toEqual(ours);
    expect(claimOwnersToWrite(cluster(), claim(ours))).toBeUndefined();
    expect(claimOwnersToWrite(retain, claim([owner, ...ours]))).toEqual([owner]);
    expect(claimOwnersToWrite(retain, claim([owner]))).toBeUndefined();
    expect(claimOwnersToWrite(retain, claim(undefined))).toBeUndefined();
  });

  it('never takes over a claim controlled by an earlier cluster of the same name', () => {
    const earlier = {
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdCluster',
      name: 'orders',
      uid: 'uid-0',
      controller: true,
    };
    expect(heldByAnother(cluster(), claim([earlier]))).toBe(true);
    expect(heldByAnother(cluster(), claim(undefined))).toBe(false);
    expect(
      heldByAnother(
        cluster(),
        claim(desiredMemberClaim(cluster(), 'orders-0', 'seed').metadata?.ownerReferences),
      ),
    ).toBe(false);
  });
});

describe('Services and PodDisruptionBudget', () => {
  it('publish members before they are ready on the peers Service; clients reach ready ones', () => {
    expect(desiredPeerService(cluster()).spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
    });
    expect(desiredClientService(cluster()).spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: 'client', port: 2379, targetPort: 'client', protocol: 'TCP' }],
    });
  });

  it('let drains take one member at a time, and do not exist for a single member', () => {
    expect(desiredPodDisruptionBudget(cluster({ size: 5 }))?.spec?.maxUnavailable).toBe(1);
    expect(desiredPodDisruptionBudget(cluster({ size: 1 }))).toBeUndefined();
  });
});

// The objects the operator builds for a Memcached, from specs the API server may hold: one stored
// before a rule existed included (review 6 found the port clash and the rollout spread).
import { describe, expect, it } from 'vitest';
import { exporterPort, loopbackStatsPort } from '../api/memcached-schema.ts';
import type { Memcached, MemcachedSpecFields } from '../api/memcached-types.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { desiredStatefulSet, secretRevisionAnnotation } from './desired-statefulset.ts';
import { desiredNetworkPolicy } from './desired-network-policy.ts';
import { desiredService } from './desired-service.ts';

const images = { memcached: 'example.test/memcached:1', exporter: 'example.test/exporter:1' };
const cache = (spec: Partial<MemcachedSpecFields> = {}): Memcached => ({
  apiVersion: 'cache.homeostat.dev/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'sessions', namespace: 'shop', uid: 'u-1', generation: 1 },
  spec: defaultedSpec(spec),
});

describe('a Memcached on the metrics port (stored before the API server refused it)', () => {
  const clash = cache({
    port: exporterPort,
    networkPolicy: { clients: [{ podSelector: { matchLabels: { app: 'web' } } }] },
  });

  it('gets no sidecar: no two containers listen on one port', () => {
    const containers = desiredStatefulSet(clash, images).spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => c.name)).toEqual(['memcached']);
  });

  it('gets a Service without a duplicate port', () => {
    expect(desiredService(clash).spec?.ports?.map((p) => `${p.name}:${p.port}`)).toEqual(['memcached:9150']);
  });

  it('never has the memcached port opened to every pod by the metrics rule', () => {
    const open = (desiredNetworkPolicy(clash)?.spec?.ingress ?? []).filter((rule) => !rule.from?.length);
    expect(open).toEqual([]);
  });
});

describe('the StatefulSet', () => {
  it('names its pods through the headless Service of the same name, and starts and stops them in parallel', () => {
    const spec = desiredStatefulSet(cache({ size: 3 }), images).spec;
    expect(spec).toMatchObject({
      replicas: 3,
      serviceName: 'sessions',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
    });
    expect(desiredService(cache()).metadata?.name).toBe('sessions');
    expect(desiredService(cache()).spec?.clusterIP).toBe('None');
  });

  it('spreads each revision on its own (matchLabelKeys controller-revision-hash), so a rollout is not counted twice', () => {
    const spread = desiredStatefulSet(
      cache({ spread: { policy: 'Required', topologyKey: 'topology.kubernetes.io/zone' } }),
      images,
    ).spec?.template.spec?.topologySpreadConstraints;
    expect(spread?.[0]?.matchLabelKeys).toEqual(['controller-revision-hash']);
  });
});

describe('the pod of a Memcached with spec.tls and spec.sasl', () => {
  const secured = cache({ tls: { secretName: 'cache-tls' }, sasl: { secretName: 'cache-sasl' } });
  const pod = (memcached: Memcached, secrets = {}) =>
    desiredStatefulSet(memcached, images, secrets).spec?.template;
  const container = (memcached: Memcached, name: string, secrets = {}) =>
    [
      ...(pod(memcached, secrets)?.spec?.initContainers ?? []),
      ...(pod(memcached, secrets)?.spec?.containers ?? []),
    ].find((c) => c.name === name);

  it('runs memcached with TLS on its port, a loopback-only plaintext listener for the sidecar, and SASL', () => {
    expect(container(secured, 'memcached', { tlsHasCa: true })?.args).toEqual([
      '-p',
      '11211',
      '-U',
      '0',
      '-m',
      '64',
      '-Z',
      '-o',
      'ssl_chain_cert=/etc/memcached/tls/tls.crt,ssl_key=/etc/memcached/tls/tls.key,ssl_ca_cert=/etc/memcached/tls/ca.crt',
      '-l',
      // "*": memcached's own default (every address of the families the node has); "[::]" named
      // explicitly makes memcached exit on a node booted without IPv6.
      `*,notls:127.0.0.1:${loopbackStatsPort}`,
      '-S',
    ]);
    expect(container(secured, 'memcached')?.env).toEqual([
      { name: 'SASL_CONF_PATH', value: '/etc/memcached/sasl' },
    ]);
    expect(container(secured, 'exporter')?.args).toEqual([
      `--memcached.address=127.0.0.1:${loopbackStatsPort}`,
      '--memcached.sasl-username-file=/etc/memcached/sasl/username',
      '--memcached.sasl-password-file=/etc/memcached/sasl/password',
      `--web.listen-address=:${exporterPort}`,
    ]);
  });

  it('passes ca.crt only when the Secret has one, and opens no extra listener without the sidecar', () => {
    const tlsOnly = cache({ tls: { secretName: 'cache-tls' }, exporter: { enabled: false } });
    expect(container(tlsOnly, 'memcached')?.args?.slice(6)).toEqual([
      '-Z',
      '-o',
      'ssl_chain_cert=/etc/memcached/tls/tls.crt,ssl_key=/etc/memcached/tls/tls.key',
    ]);
  });

  it('builds the SASL database in memory, from the Secret mounted read-only, before memcached starts', () => {
    const spec = pod(secured)?.spec;
    expect(spec?.initContainers?.map((c) => `${c.name} ${c.image}`)).toEqual([
      `sasl-database ${images.memcached}`,
    ]);
    expect(spec?.volumes).toEqual([
      { name: 'tls', secret: { secretName: 'cache-tls', defaultMode: 0o440 } },
      { name: 'sasl-credentials', secret: { secretName: 'cache-sasl', defaultMode: 0o440 } },
      { name: 'sasl', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
    ]);
    // Secret files are root's, mode 0440: the pod's user reads them through fsGroup.
    expect(spec?.securityContext?.fsGroup).toBe(11211);
    expect(pod(cache())?.spec?.securityContext?.fsGroup).toBeUndefined();
    expect(container(secured, 'memcached')?.volumeMounts?.every((m) => m.readOnly)).toBe(true);
    expect(container(secured, 'sasl-database')?.volumeMounts).toContainEqual({
      name: 'sasl-credentials',
      mountPath: '/etc/memcached/sasl-credentials',
      readOnly: true,
    });
  });

  it('authenticates the sidecar with the copy the SASL database was built from, never the live Secret', () => {
    // The kubelet updates a mounted Secret in place within a minute of a rotation, but memcached
    // keeps the database it started with until the pod rolls (up to 5 minutes later, then one pod
    // at a time): a sidecar reading the live Secret would be refused at its next connection.
    expect(container(secured, 'exporter')?.volumeMounts).toEqual([
      { name: 'sasl', mountPath: '/etc/memcached/sasl', readOnly: true },
    ]);
    expect(container(secured, 'sasl-database')?.command?.[2]).toContain(
      'cp -f "$CREDENTIALS_DIR/username" "$CREDENTIALS_DIR/password" "$SASL_DIR/"',
    );
  });

  it('holds no secret value: only Secret names and file paths, the password read from a file', () => {
    const text = JSON.stringify(desiredStatefulSet(secured, images, { revision: 'tls=u1/7,sasl=u2/9' }));
    expect(text).not.toMatch(/secretKeyRef|envFrom|stringData/);
    const init = container(secured, 'sasl-database');
    expect(init?.env?.map((e) => e.name)).toEqual(['CREDENTIALS_DIR', 'SASL_DIR']);
    expect(init?.command?.[2]).toContain('< "$SASL_DIR/password"');
  });

  it('rolls the pods when a named Secret changes (its version is in a pod annotation), and not otherwise', () => {
    expect(pod(secured, { revision: 'tls=u1/7,sasl=u2/9' })?.metadata?.annotations).toEqual({
      [secretRevisionAnnotation]: 'tls=u1/7,sasl=u2/9',
    });
    expect(pod(cache())?.metadata?.annotations).toBeUndefined();
    expect(pod(cache())?.spec?.volumes).toBeUndefined();
    expect(pod(cache())?.spec?.initContainers).toBeUndefined();
  });

  it('gets no sidecar on the loopback statistics port (a spec stored before the API server refused it)', () => {
    const clash = cache({ port: loopbackStatsPort, tls: { secretName: 'cache-tls' } });
    expect(pod(clash)?.spec?.containers.map((c) => c.name)).toEqual(['memcached']);
    expect(container(clash, 'memcached')?.args).not.toContain('-l');
  });
});

describe('a restart request (homeostat.dev/restartedAt on the Memcached)', () => {
  const asked = (value: string): Memcached => {
    const memcached = cache();
    return {
      ...memcached,
      metadata: { ...memcached.metadata, annotations: { [restartedAtAnnotation]: value } },
    };
  };
  const template = (memcached: Memcached, secrets = {}) =>
    desiredStatefulSet(memcached, images, secrets).spec?.template;

  it('goes into the pod template, so the StatefulSet rolls its pods; a new value rolls them again', () => {
    expect(template(asked('2026-11-28T01:00:00Z'))?.metadata?.annotations).toEqual({
      'homeostat.dev/restartedAt': '2026-11-28T01:00:00Z',
    });
    expect(template(asked('2026-11-28T02:00:00Z'))).not.toEqual(template(asked('2026-11-28T01:00:00Z')));
  });

  it('sits beside the Secret revision without replacing it', () => {
    expect(template(asked('t1'), { revision: 'tls=u1/7' })?.metadata?.annotations).toEqual({
      [secretRevisionAnnotation]: 'tls=u1/7',
      [restartedAtAnnotation]: 't1',
    });
  });

  it('leaves the template as it was without one, so upgrading the operator rolls nothing', () => {
    const plain = cache();
    const other = { ...plain, metadata: { ...plain.metadata, annotations: { 'example.test/note': 'x' } } };
    expect(template(other)).toEqual(template(plain));
    expect(template(plain)?.metadata?.annotations).toBeUndefined();
  });
});

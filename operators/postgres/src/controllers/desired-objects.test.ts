// The desired objects of a cluster: pure functions of the spec (and the passwords given).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import { instanceName, instanceNames, ordinalOf } from './cluster-names.ts';
import { desiredClaim } from './desired-claim.ts';
import { desiredDisruptionBudgets } from './desired-pdbs.ts';
import { desiredInstancePod, instancePodSpec, specHash } from './desired-pod.ts';
import { appSecret, desiredSecrets, newPassword, replicationSecret } from './desired-secrets.ts';
import { desiredServices } from './desired-services.ts';
import { confLiteral, renderParameters } from './postgres-parameters.ts';

const owner = {
  apiVersion: 'postgres.homeostat.dev/v1alpha1',
  kind: 'PostgreSQLCluster',
  name: 'orders',
  uid: 'uid-orders',
  controller: true,
  blockOwnerDeletion: true,
};

describe('instance names', () => {
  it('numbers the instances and reads the number back only from an instance of that cluster', () => {
    expect(instanceNames('orders', 3)).toEqual(['orders-0', 'orders-1', 'orders-2']);
    expect(ordinalOf('orders', instanceName('orders', 7))).toBe(7);
    expect(ordinalOf('orders', 'orders-rw')).toBeUndefined();
    expect(ordinalOf('orders', 'orders-01')).toBeUndefined();
    expect(ordinalOf('order', 'orders-1')).toBeUndefined();
  });
});

describe('parameters', () => {
  it('are sorted, quoted, and a quote in a value is doubled', () => {
    const cluster = storedCluster('orders', 'ns', {
      postgresql: {
        parameters: { work_mem: '16MB', 'auto_explain.log_format': "it's json", max_connections: '200' },
      },
    });
    expect(renderParameters(cluster)).toBe(
      ["auto_explain.log_format = 'it''s json'", "max_connections = '200'", "work_mem = '16MB'"].join('\n'),
    );
    expect(confLiteral("a'b")).toBe("'a''b'");
  });

  it('refuse a value that would become a second line, whatever got past the API server', () => {
    const cluster = storedCluster('orders', 'ns', {
      postgresql: { parameters: { work_mem: "1MB\nwal_level = 'minimal'" } },
    });
    expect(() => renderParameters(cluster)).toThrow("postgresql.parameters: 'work_mem' cannot be written");
  });
});

describe('the instance pod', () => {
  const cluster = storedCluster('orders', 'shop', {
    postgresVersion: 17,
    resources: { requests: { cpu: '500m' }, limits: { memory: '1Gi' } },
    postgresql: { parameters: { max_connections: '200' } },
    bootstrap: { database: 'orders', owner: 'orders' },
  });
  const pod = desiredInstancePod(cluster, 'orders-1', {
    image: 'example.test/postgres:17',
    role: 'replica',
    initdb: 'refused',
  });
  const container = pod.spec?.containers[0];
  const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

  it('runs the entrypoint with its role from an annotation, resolved at each start, and its claim', () => {
    expect(pod.metadata).toMatchObject({
      name: 'orders-1',
      namespace: 'shop',
      ownerReferences: [owner],
      labels: { 'postgres.homeostat.dev/cluster': 'orders', 'postgres.homeostat.dev/instance': 'orders-1' },
      annotations: { 'postgres.homeostat.dev/instance-role': 'replica' },
    });
    // The routing label is not the pod's to set: the operator's routing field manager owns it.
    expect(pod.metadata?.labels?.['postgres.homeostat.dev/role']).toBeUndefined();
    expect(container?.command).toEqual(['/usr/local/bin/homeostat-instance']);
    expect(env).toMatchObject({
      INSTANCE_ROLE: {
        fieldRef: { fieldPath: "metadata.annotations['postgres.homeostat.dev/instance-role']" },
      },
      INSTANCE_NAME: { fieldRef: { fieldPath: 'metadata.name' } },
      PRIMARY_HOST: 'orders-rw.shop.svc',
      PG_BIN: '/usr/lib/postgresql/17/bin',
      PG_APP_DATABASE: 'orders',
      PG_PARAMETERS: "max_connections = '200'",
      PGDATA: '/var/lib/postgresql/data/pgdata',
    });
    expect(pod.spec).toMatchObject({ hostname: 'orders-1', subdomain: 'orders-instances' });
    expect(pod.spec?.volumes?.[0]).toEqual({
      name: 'data',
      persistentVolumeClaim: { claimName: 'orders-1' },
    });
    expect(container?.resources).toEqual({ requests: { cpu: '500m' }, limits: { memory: '1Gi' } });
  });

  it('passes Pod Security "restricted" and mounts no service account token', () => {
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it("shows the entrypoint's own termination message, never a log's tail", () => {
    expect(container).toMatchObject({
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
  });

  it('runs a self-fence container beside postgres, in the same process namespace, that can stop it', () => {
    expect(pod.spec?.shareProcessNamespace).toBe(true);
    const fence = pod.spec?.containers.find((c) => c.name === 'self-fence');
    expect(fence?.command).toEqual(['/usr/local/bin/homeostat-instance', 'self-fence']);
    expect(fence?.image).toBe(container?.image);
    expect(Object.fromEntries((fence?.env ?? []).map((e) => [e.name, e.value]))).toMatchObject({
      PGDATA: '/var/lib/postgresql/data/pgdata',
      PG_PEERS_HOST: 'orders-instances.shop.svc',
      PG_SELF_FENCE_MS: '1000',
    });
    expect(fence?.volumeMounts?.map((m) => m.name)).toEqual(['data', 'run', 'tmp', 'pod-info']);
    expect(fence?.securityContext).toEqual(container?.securityContext);
  });

  it('gives both containers the fence annotation as a file, and keeps a fenced instance unready but alive', () => {
    const volume = pod.spec?.volumes?.find((v) => v.name === 'pod-info');
    expect(volume?.downwardAPI?.items).toEqual([
      { path: 'fenced', fieldRef: { fieldPath: "metadata.annotations['postgres.homeostat.dev/fenced']" } },
    ]);
    for (const name of ['postgres', 'self-fence']) {
      const c = pod.spec?.containers.find((x) => x.name === name);
      expect(c?.env?.find((e) => e.name === 'PG_FENCE_FILE')?.value).toBe('/etc/homeostat/pod/fenced');
      expect(c?.volumeMounts?.find((m) => m.name === 'pod-info')).toEqual({
        name: 'pod-info',
        mountPath: '/etc/homeostat/pod',
        readOnly: true,
      });
    }
    // Startup and liveness pass while fenced (no restart loop); readiness never does (no Service).
    const bypass = '[[ "$(cat /etc/homeostat/pod/fenced 2>/dev/null)" == true ]] ||';
    expect(container?.startupProbe?.exec?.command?.[2]).toContain(bypass);
    expect(container?.livenessProbe?.exec?.command?.[2]).toContain(bypass);
    expect(container?.readinessProbe?.exec?.command).toEqual([
      'pg_isready',
      '-q',
      '-h',
      '/var/run/postgresql',
      '-p',
      '5432',
    ]);
    expect(pod.metadata?.annotations?.['postgres.homeostat.dev/fenced']).toBeUndefined();
    const fenced = desiredInstancePod(cluster, 'orders-1', {
      image: 'i',
      role: 'replica',
      initdb: 'refused',
      fenced: true,
    });
    expect(fenced.metadata?.annotations?.['postgres.homeostat.dev/fenced']).toBe('true');
  });

  it('spreads instances over nodes by default, and as asked otherwise', () => {
    expect(pod.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]).toEqual(
      {
        weight: 100,
        podAffinityTerm: {
          topologyKey: 'kubernetes.io/hostname',
          labelSelector: { matchLabels: { 'postgres.homeostat.dev/cluster': 'orders' } },
        },
      },
    );
    const strict = storedCluster('orders', 'shop', {
      scheduling: { antiAffinity: 'required', topologyKey: 'topology.kubernetes.io/zone' },
    });
    const required = desiredInstancePod(strict, 'orders-0', {
      image: 'i',
      role: 'primary',
      initdb: 'allowed',
    }).spec?.affinity;
    expect(required?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey).toBe(
      'topology.kubernetes.io/zone',
    );
    const none = storedCluster('orders', 'shop', { scheduling: { antiAffinity: 'none' } });
    expect(
      desiredInstancePod(none, 'orders-0', { image: 'i', role: 'primary', initdb: 'allowed' }).spec?.affinity,
    ).toBeUndefined();
  });

  it('hashes what all instances share: a change of parameters changes it, the role and initdb do not', () => {
    const primary = desiredInstancePod(cluster, 'orders-0', {
      image: 'example.test/postgres:17',
      role: 'primary',
      initdb: 'allowed',
    });
    expect(primary.spec?.containers[0]?.env).toContainEqual({ name: 'PG_INITDB', value: 'allowed' });
    expect(env['PG_INITDB'], 'a pod made once the cluster was bootstrapped').toBe('refused');
    const hash = pod.metadata?.annotations?.['postgres.homeostat.dev/spec-hash'];
    expect(primary.metadata?.annotations?.['postgres.homeostat.dev/spec-hash']).toBe(hash);
    const changed = storedCluster('orders', 'shop', {
      ...cluster.spec,
      postgresql: { parameters: { max_connections: '300' } },
    });
    expect(specHash(instancePodSpec(changed, 'example.test/postgres:17'))).not.toBe(hash);
  });
});

describe('a restart request (homeostat.dev/restartedAt on the cluster)', () => {
  const inputs = { image: 'example.test/postgres:17', role: 'replica', initdb: 'refused' } as const;
  const annotated = (annotations: Record<string, string>) => {
    const cluster = storedCluster('orders', 'shop', {});
    return { ...cluster, metadata: { ...cluster.metadata, annotations } };
  };
  const hashOf = (cluster: ReturnType<typeof annotated>) =>
    desiredInstancePod(cluster, 'orders-1', inputs).metadata?.annotations?.[
      'postgres.homeostat.dev/spec-hash'
    ];

  it('changes the spec hash, so the rolling restart takes every pod, and is carried on the pod', () => {
    const asked = annotated({ [restartedAtAnnotation]: '2026-11-28T01:00:00Z' });
    const again = annotated({ [restartedAtAnnotation]: '2026-11-28T02:00:00Z' });
    expect(hashOf(asked)).not.toBe(hashOf(annotated({})));
    expect(hashOf(again)).not.toBe(hashOf(asked));
    expect(hashOf(asked)).toBe(specHash(instancePodSpec(asked, inputs.image), '2026-11-28T01:00:00Z'));
    expect(desiredInstancePod(asked, 'orders-1', inputs).metadata?.annotations?.[restartedAtAnnotation]).toBe(
      '2026-11-28T01:00:00Z',
    );
  });

  it('leaves the hash as it was before requests existed without one, so an upgraded operator restarts nothing', () => {
    const plain = annotated({ 'example.test/note': 'x' });
    // The hash every pod made so far carries: sha256 of the shared spec alone.
    const earlier = createHash('sha256')
      .update(JSON.stringify(instancePodSpec(plain, inputs.image)))
      .digest('hex')
      .slice(0, 16);
    expect(hashOf(plain)).toBe(earlier);
    expect(
      desiredInstancePod(plain, 'orders-1', inputs).metadata?.annotations?.[restartedAtAnnotation],
    ).toBeUndefined();
  });
});

describe('claims, Services and disruption budgets', () => {
  it('gives each instance a claim of the asked size, owned unless retained', () => {
    const claim = desiredClaim(
      storedCluster('orders', 'shop', { storage: { size: '10Gi', storageClassName: 'fast' } }),
      'orders-2',
    );
    expect(claim.metadata?.ownerReferences).toEqual([owner]);
    expect(claim.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '10Gi' } },
      storageClassName: 'fast',
    });
    const retained = desiredClaim(
      storedCluster('orders', 'shop', { storage: { retention: 'Retain' } }),
      'orders-2',
    );
    expect(retained.metadata?.ownerReferences).toBeUndefined();
  });

  it('routes -rw to the primary label, -ro to the replicas, -r to either, and resolves every pod by name', () => {
    const services = desiredServices(storedCluster('orders', 'shop'));
    expect(services.map((s) => [s.metadata?.name, s.spec?.selector, s.spec?.clusterIP])).toEqual([
      [
        'orders-rw',
        { 'postgres.homeostat.dev/cluster': 'orders', 'postgres.homeostat.dev/role': 'primary' },
        undefined,
      ],
      [
        'orders-ro',
        { 'postgres.homeostat.dev/cluster': 'orders', 'postgres.homeostat.dev/role': 'replica' },
        undefined,
      ],
      [
        'orders-r',
        { 'postgres.homeostat.dev/cluster': 'orders', 'postgres.homeostat.dev/routed': 'true' },
        undefined,
      ],
      ['orders-instances', { 'postgres.homeostat.dev/cluster': 'orders' }, 'None'],
    ]);
    expect(services[3]?.spec?.publishNotReadyAddresses).toBe(true);
  });

  it('keeps the primary and lets one replica go at a time; none for a single instance', () => {
    const budgets = desiredDisruptionBudgets(storedCluster('orders', 'shop', { instances: 3 }));
    expect(budgets.map((b) => [b.metadata?.name, b.spec?.minAvailable, b.spec?.maxUnavailable])).toEqual([
      ['orders-primary', 1, undefined],
      ['orders-replicas', undefined, 1],
    ]);
    expect(desiredDisruptionBudgets(storedCluster('orders', 'shop', { instances: 1 }))).toEqual([]);
    expect(
      desiredDisruptionBudgets(storedCluster('orders', 'shop', { podDisruptionBudget: { enabled: false } })),
    ).toEqual([]);
  });
});

describe('Secrets', () => {
  it('give an application everything to connect through -rw, password never shown elsewhere', () => {
    const cluster = storedCluster('orders', 'shop', {
      bootstrap: { database: 'orders', owner: 'shop_owner' },
    });
    const secret = appSecret(cluster, 'pw-123');
    expect(secret.type).toBe('kubernetes.io/basic-auth');
    expect(secret.metadata?.ownerReferences).toEqual([owner]);
    expect(secret.stringData).toEqual({
      username: 'shop_owner',
      password: 'pw-123',
      host: 'orders-rw.shop.svc',
      port: '5432',
      dbname: 'orders',
      uri: 'postgresql://shop_owner:pw-123@orders-rw.shop.svc:5432/orders',
      pgpass: 'orders-rw.shop.svc:5432:orders:shop_owner:pw-123\n',
    });
    expect(replicationSecret(cluster, 'r').stringData).toEqual({
      username: 'streaming_replica',
      password: 'r',
    });
  });

  it('publish the superuser only when asked, and draw every password fresh from node:crypto', () => {
    const names = (s: { metadata?: { name?: string } }[]) => s.map((x) => x.metadata?.name);
    expect(names(desiredSecrets(storedCluster('orders', 'shop')))).toEqual([
      'orders-app',
      'orders-replication',
      'orders-operator',
    ]);
    expect(names(desiredSecrets(storedCluster('orders', 'shop', { superuserAccess: true })))).toContain(
      'orders-superuser',
    );
    const passwords = new Set(Array.from({ length: 100 }, () => newPassword()));
    expect(passwords.size).toBe(100);
    for (const p of passwords) expect(p).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});

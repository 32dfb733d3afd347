// What `npm start` installs: each operator's chart, its image (the chart's default, built
// offline by `npm run images`), its sample custom resources and the condition that says a
// sample is up. An operator joins `npm start` by being listed here.
import { join } from 'node:path';
import { repoRoot } from '@homeostat/testing';
import { operatorCharts, type OperatorChartRef } from '../harness/operator-charts.ts';
import { operatorImages } from '../images/image-names.ts';

export interface InstallableOperator {
  /** Its chart (the Helm release is named like the chart) and CRDs. */
  chart: OperatorChartRef;
  /** The image the chart runs by default. */
  image: string;
  /** Sample custom resources (YAML files), applied into the samples namespace. */
  samples: readonly string[];
  /** The resource (as kubectl names it), and the conditions (kubectl wait --for=condition=…) of a sample that is fully up. */
  sampleResource: string;
  readyConditions: readonly string[];
  /** A command worth trying on a running sample. */
  tryIt: (namespace: string) => string;
}

export const homeostatOperators: readonly InstallableOperator[] = [
  {
    chart: operatorCharts.memcached,
    image: operatorImages.memcached,
    samples: [join(repoRoot, 'operators', 'memcached', 'config', 'samples', 'memcached.yaml')],
    sampleResource: 'memcacheds.cache.homeostat.dev',
    // Available: enough pods serve; Progressing=False: every pod is updated; Degraded=False: all ready.
    readyConditions: ['Available', 'Progressing=False', 'Degraded=False'],
    tryIt: (namespace) => `kubectl -n ${namespace} scale memcached/sessions --replicas=1`,
  },
  {
    chart: operatorCharts.etcd,
    image: operatorImages.etcd,
    samples: [join(repoRoot, 'operators', 'etcd', 'config', 'samples', 'etcd-cluster.yaml')],
    sampleResource: 'etcdclusters.etcd.homeostat.dev',
    // Available: a majority of members healthy; Progressing=False: every member added and a voter;
    // Degraded=False: every member healthy.
    readyConditions: ['Available', 'Progressing=False', 'Degraded=False'],
    tryIt: (namespace) => `kubectl -n ${namespace} scale etcdcluster/orders --replicas=5`,
  },
  {
    chart: operatorCharts.postgres,
    image: operatorImages.postgres,
    samples: [join(repoRoot, 'operators', 'postgres', 'config', 'samples', 'postgresqlcluster.yaml')],
    sampleResource: 'postgresqlclusters.postgres.homeostat.dev',
    // Available: the primary takes writes; Progressing=False: every instance exists as specified;
    // Degraded=False: every instance is Ready (replicas cloned and streaming), which Progressing
    // does not wait for.
    readyConditions: ['Available', 'Progressing=False', 'Degraded=False'],
    tryIt: (namespace) =>
      `kubectl -n ${namespace} patch pgc/accounts --type=merge -p '{"spec":{"primary":"accounts-1"}}'   # a switchover`,
  },
];

/** Where the operators run, and where the samples run (both enforce Pod Security "restricted"). */
export const operatorNamespace = 'homeostat-system';
export const samplesNamespace = 'homeostat-samples';

// `npm start`, the project's main job: a cluster running every Homeostat operator with its
// sample custom resources. By default on the local cluster (brought up or reused, with every
// image built offline and imported); with --current-kubeconfig on the cluster in KUBECONFIG (or
// ~/.kube/config), which must be able to pull the chart's images (for kind: e2e/kind/up.sh).
// Re-running converges: charts are upgraded in place and samples re-applied.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { note, seconds, step } from './cluster/progress.ts';
import { apply, getObject, kubectl } from './harness/cluster-access.ts';
import { helm, installableChart } from './harness/helm.ts';
import { chartDir } from './harness/operator-charts.ts';
import { localClusterWithImages } from './local-cluster.ts';
import {
  homeostatOperators,
  operatorNamespace,
  samplesNamespace,
  type InstallableOperator,
} from './start/homeostat-operators.ts';

// Failures carry their context in the message (which command failed and what it printed); a
// stack trace adds nothing for the person who ran npm start.
process.on('uncaughtException', (error) => {
  console.error(`\nnpm start failed: ${error.message}`);
  process.exit(1);
});

const usage = `usage: npm start [-- --current-kubeconfig]
  (default)             bring up or reuse the local cluster, build and import the images
  --current-kubeconfig  use the cluster in KUBECONFIG (or ~/.kube/config); it pulls the images itself`;

const { values } = parseArgs({
  options: {
    'current-kubeconfig': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.error(usage);
  process.exit(0);
}

const started = Date.now();
if (values['current-kubeconfig']) {
  const kubeconfig = process.env['KUBECONFIG'] || join(homedir(), '.kube', 'config');
  // KUBECONFIG may list several files, as kubectl allows.
  const missing = kubeconfig.split(':').filter((path) => path && !existsSync(path));
  if (missing.length) {
    console.error(`--current-kubeconfig: ${missing.join(', ')} does not exist\n${usage}`);
    process.exit(2);
  }
  process.env['KUBECONFIG'] = kubeconfig;
  note(
    `using the cluster in ${kubeconfig}; its nodes must be able to pull ${homeostatOperators.map((o) => o.image).join(', ')}`,
  );
} else {
  process.env['KUBECONFIG'] = (await localClusterWithImages()).kubeconfig;
}

await step(`namespaces ${operatorNamespace} and ${samplesNamespace} (Pod Security "restricted")`, () =>
  apply(
    [operatorNamespace, samplesNamespace].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          'app.kubernetes.io/part-of': 'homeostat',
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    })),
  ),
);

for (const operator of homeostatOperators) {
  await step(`helm upgrade --install ${operator.chart.name} (${operator.image})`, () => install(operator));
}

for (const operator of homeostatOperators) {
  await step(`sample ${operator.sampleResource} (until ${operator.readyConditions.join(', ')})`, async () => {
    for (const sample of operator.samples) {
      await kubectl([
        'apply',
        '--server-side',
        '--field-manager=homeostat-start',
        '-n',
        samplesNamespace,
        '-f',
        sample,
      ]);
    }
    await waitForSamples(operator);
  });
}

console.error(`\nHomeostat is up in ${seconds(started)} s.`);
const summary = [
  `KUBECONFIG=${process.env['KUBECONFIG']}`,
  '',
  (await helm(['list', '--namespace', operatorNamespace])).trimEnd(),
  '',
  (await kubectl(['get', 'pods', '--namespace', operatorNamespace])).trimEnd(),
  '',
  (
    await kubectl([
      'get',
      homeostatOperators.map((o) => o.sampleResource).join(','),
      '--namespace',
      samplesNamespace,
    ])
  ).trimEnd(),
  '',
  ...homeostatOperators.map((o) => `Try: ${o.tryIt(samplesNamespace)}`),
  values['current-kubeconfig'] ? '' : 'Remove it all with: npm run cluster:down',
];
process.stdout.write(`${summary.join('\n')}\n`);

async function install(operator: InstallableOperator): Promise<void> {
  for (const crd of operator.chart.crds) await adoptKeptCrd(crd, operator.chart.name);
  await helm([
    'upgrade',
    '--install',
    operator.chart.name,
    await installableChart(chartDir(operator.chart)),
    '--namespace',
    operatorNamespace,
    '--wait',
    '--timeout',
    '180s',
  ]);
}

// The charts keep their CRDs on uninstall (so uninstalling never deletes every custom resource).
// A CRD kept from another release, or applied by hand, would make `helm install` refuse to
// take it over; Helm's documented adoption is to mark it as this release's.
async function adoptKeptCrd(crd: string, release: string): Promise<void> {
  const existing = await getObject<{ metadata: { annotations?: Record<string, string> } }>(
    'customresourcedefinition',
    crd,
  );
  if (!existing) return;
  const annotations = existing.metadata.annotations ?? {};
  const owner = `${annotations['meta.helm.sh/release-namespace'] ?? '-'}/${annotations['meta.helm.sh/release-name'] ?? '-'}`;
  if (owner === `${operatorNamespace}/${release}`) return;
  note(`adopting CRD ${crd}, kept from ${owner === '-/-' ? 'an install outside Helm' : `release ${owner}`}`);
  await kubectl([
    'annotate',
    '--overwrite',
    'customresourcedefinition',
    crd,
    `meta.helm.sh/release-name=${release}`,
    `meta.helm.sh/release-namespace=${operatorNamespace}`,
  ]);
  await kubectl([
    'label',
    '--overwrite',
    'customresourcedefinition',
    crd,
    'app.kubernetes.io/managed-by=Helm',
  ]);
}

async function waitForSamples(operator: InstallableOperator): Promise<void> {
  for (const condition of operator.readyConditions) {
    try {
      await kubectl([
        'wait',
        '--namespace',
        samplesNamespace,
        operator.sampleResource,
        '--all',
        `--for=condition=${condition}`,
        '--timeout=300s',
      ]);
    } catch (error) {
      // Say why, from what the operator reported: conditions and Events.
      const details = await kubectl([
        'describe',
        operator.sampleResource,
        '--namespace',
        samplesNamespace,
      ]).catch((e: unknown) => String(e));
      throw new Error(`samples of ${operator.chart.name} did not reach ${condition}:\n${details}`, {
        cause: error,
      });
    }
  }
}

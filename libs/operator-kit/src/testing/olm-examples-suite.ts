// The examples an OLM console offers (the CSV's alm-examples, the operator's samples) must be
// objects the API server accepts: a console user's first click should not meet a schema error.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { builtin, KubeClient, resourceType, type KubeObject } from '@homeostat/reconcile';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import type { OperatorChart } from '../chart/operator-chart.ts';
import { olmPaths } from '../olm/bundle-files.ts';
import { crdSpecOf } from '../olm/crd-fields.ts';

const csvAnnotations = Type.Object({
  metadata: Type.Object(
    { annotations: Type.Object({ 'alm-examples': Type.String() }, { additionalProperties: true }) },
    {
      additionalProperties: true,
    },
  ),
});
const example = Type.Object(
  { apiVersion: Type.String(), kind: Type.String(), metadata: Type.Object({ name: Type.String() }) },
  { additionalProperties: true },
);

/** The alm-examples of the committed CSV of `chart`'s bundle. */
export function committedAlmExamples(chart: OperatorChart): unknown[] {
  const manifests = olmPaths(chart).manifests;
  const csvFile = readdirSync(manifests).find((file) => file.endsWith('.clusterserviceversion.yaml'));
  if (!csvFile) throw new Error(`${manifests} holds no ClusterServiceVersion`);
  const csv: unknown = parse(readFileSync(join(manifests, csvFile), 'utf8'));
  if (!Value.Check(csvAnnotations, csv)) throw new Error(`${csvFile} has no alm-examples annotation`);
  const examples: unknown = JSON.parse(csv.metadata.annotations['alm-examples']);
  if (!Array.isArray(examples)) throw new Error(`${csvFile}'s alm-examples is not a JSON array`);
  return examples;
}

/**
 * Registers a test that creates every alm-example of `chart`'s bundle on the shared control plane
 * (controlPlaneGlobalSetup), with the chart's CRDs installed, in a namespace of its own.
 */
export function describeOlmExamples(chart: OperatorChart): void {
  describe(`${chart.name} OLM examples on a real kube-apiserver`, () => {
    const kubeConfig = sharedKubeConfig();
    const client = new KubeClient(kubeConfig, { fieldManager: 'olm-console-user' });
    const namespace = `olm-examples-${process.pid}`;

    beforeAll(async () => {
      await installCrds(kubeConfig, chart.crds);
      await client.create(builtin.namespaces, { metadata: { name: namespace } });
    });
    afterAll(async () => {
      await client.delete(builtin.namespaces, namespace);
    });

    it('every kind the bundle owns has an example, and the API server accepts each', async () => {
      const examples = committedAlmExamples(chart);
      const kinds = chart.crds.map((crd) => crdSpecOf(crd).names.kind);
      expect(examples.map((e) => (Value.Check(example, e) ? e.kind : 'not an object')).sort()).toEqual(
        [...kinds].sort(),
      );
      for (const object of examples) {
        if (!Value.Check(example, object))
          throw new Error(`alm-example ${JSON.stringify(object)} has no kind or name`);
        const crd = chart.crds.find((c) => crdSpecOf(c).names.kind === object.kind);
        if (!crd) throw new Error(`alm-example of kind ${object.kind} is not a kind of ${chart.name}`);
        const type = resourceType<KubeObject>(object.apiVersion, object.kind, crdSpecOf(crd).names.plural);
        await client.create(type, { ...object, metadata: { ...object.metadata, namespace } });
      }
    });
  });
}

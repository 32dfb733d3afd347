// The checks every operator's OLM release passes: its bundle through operator-framework/api's
// validators (tools/olm-validate, the checks `operator-sdk bundle validate` makes with the
// operatorframework suite), and its file-based catalog package through catalogProblems.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { sourceKeyedBinaryPath } from '@homeostat/testing';
import { crdKind, type OperatorChart } from '../chart/operator-chart.ts';
import { olmPaths } from '../olm/bundle-files.ts';
import { chartMetadata } from '../olm/chart-metadata.ts';
import { catalogProblems } from '../olm/file-based-catalog.ts';

/**
 * Warnings the validators give every Homeostat bundle that no change to the bundle can remove,
 * each with why it is accepted. Any other warning fails the test: fix it, or add it here with a
 * reason a reviewer can check.
 */
export const acceptedValidatorWarnings: readonly { pattern: RegExp; why: string }[] = [
  {
    pattern:
      /deprecated and removed in v1\.25\. .* Migrate the API\(s\) for ((events|poddisruptionbudgets): \(\[("[^"]*",?)+\]\),)+$/,
    why:
      'The removed-API check matches RBAC rules by resource name. Rules name a group and a resource, ' +
      'never a version: the rules for events.k8s.io events and policy poddisruptionbudgets grant the ' +
      'v1 APIs the operators use, not the v1beta1 ones removed in 1.25.',
  },
];

/** Where tools/build-binaries.sh puts olm-validate (keyed by the api version and its sources). */
export function olmValidatePath(): string {
  return sourceKeyedBinaryPath('olm-validate');
}

/** olm-validate on a bundle directory, at the oldest Kubernetes the chart admits. */
export function validateBundle(chart: OperatorChart, dir: string) {
  const [major, minor] = chartMetadata(chart).minKubeVersion.split('.');
  return spawnSync(olmValidatePath(), ['--k8s-version', `${major}.${minor}`, dir], { encoding: 'utf8' });
}

/** Registers the validator tests of `chart`'s generated bundle (olm/bundles/<chart>). */
export function describeOlmBundleValidation(chart: OperatorChart): void {
  const bundle = olmPaths(chart).bundle;
  describe(`${chart.name} OLM bundle with operator-framework/api's validators`, () => {
    const scratch = mkdtempSync(join(tmpdir(), `${chart.name}-bundle-`));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it('has no error, and no warning but the accepted ones', () => {
      const run = validateBundle(chart, bundle);
      const lines = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('ERROR') || line.startsWith('WARNING'));
      for (const line of lines) console.warn(`olm-validate ${chart.name}: ${line}`);
      expect(run.stderr).toBe('');
      expect(lines.filter((line) => line.startsWith('ERROR'))).toEqual([]);
      const unexplained = lines.filter(
        (line) => !acceptedValidatorWarnings.some((w) => w.pattern.test(line)),
      );
      expect(unexplained).toEqual([]);
      expect(run.status).toBe(0);
    });

    it('fails a copy whose CSV owns a CRD the bundle lacks (the validators are live)', () => {
      const broken = join(scratch, 'broken');
      cpSync(bundle, broken, { recursive: true });
      const crd = chart.crds[0];
      if (!crd) throw new Error(`${chart.name} has no CRD`);
      rmSync(join(broken, 'manifests', `${crd.metadata.name}.yaml`));
      const run = validateBundle(chart, broken);
      expect(run.status).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`ERROR .*owned CRD "[^"]*Kind=${crdKind(crd)}" not found`));
    });
  });
}

/** Registers the structural test of `chart`'s package in the file-based catalog (olm/catalog/<chart>). */
export function describeOlmCatalogPackage(chart: OperatorChart): void {
  describe(`${chart.name} package of the file-based catalog`, () => {
    it('has well-formed olm.package, olm.channel and olm.bundle entries that refer to each other', () => {
      const entries = parseAllDocuments(readFileSync(olmPaths(chart).catalog, 'utf8')).map((d): unknown =>
        d.toJS(),
      );
      expect(catalogProblems(entries)).toEqual([]);
    });
  });
}

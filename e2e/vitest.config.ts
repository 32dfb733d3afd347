import { defineConfig } from 'vitest/config';
import { isMultiNodeKind } from './harness/kind-nodes.ts';

// Suites named *.kind.e2e.test.ts stop nodes of a kind cluster of three or more workers: they run
// only there (`npm run e2e -- --cluster kind`), and are not collected at all anywhere else, so no
// run reports a skipped test as if it had been checked.
const onMultiNodeKind = isMultiNodeKind();
// Opt-in suites run only when a filter on the command line names them (`npm run e2e -- monitoring`):
// the monitoring suite builds Prometheus and waits out its alerts' `for`, minutes the default run
// does not spend.
const optInSuites = ['suites/monitoring.cluster.e2e.test.ts'];
// A filter such as `cluster` matches it too, but does not name it.
const named = (suite: string) =>
  process.argv.some((arg) => arg.includes('monitoring') && suite.includes(arg));
const notNamed = optInSuites.filter((suite) => !named(suite));

export default defineConfig({
  test: {
    include: ['suites/**/*.e2e.test.ts'],
    exclude: [...(onMultiNodeKind ? [] : ['suites/**/*.kind.e2e.test.ts']), ...notNamed],
    // A failed test prints the cluster's state and the operators' logs (its CI run is the only one).
    setupFiles: ['./report-failures.setup.ts'],
    // `kubectl homeostat`, installed once per run for the suites that drive it.
    globalSetup: ['./harness/kubectl-plugin.global-setup.ts'],
    // Suites share one cluster on a two-core machine: one file at a time keeps timings sane.
    fileParallelism: false,
    // Pods start in seconds, but a cold node pulls/unpacks images and schedules slowly.
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});

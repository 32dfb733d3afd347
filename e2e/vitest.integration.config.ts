import { defineConfig } from 'vitest/config';

// `npm test`'s part of this project: tests of the launcher and harness themselves, which need no
// cluster (some need root: they make network namespaces). The suites, which need a cluster, run
// with `npm run e2e` through vitest.config.ts.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['suites/**', '**/node_modules/**'],
    testTimeout: 60_000,
  },
});

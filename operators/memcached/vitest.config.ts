import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // exporter/: the metrics sidecar's Go binary, tested against a real memcached.
    include: ['src/**/*.test.ts', 'exporter/**/*.test.ts'],
    // One real etcd + kube-apiserver shared by every integration test file of this project, and
    // the chart's library dependency vendored before any test renders the chart.
    globalSetup: ['./src/test-support/global-setup.ts', './src/test-support/chart-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One real etcd + kube-apiserver shared by every API-server test file of this project (the
    // operand tests start their own etcd members), and the chart's library dependency vendored
    // before any test renders the chart.
    globalSetup: ['./src/test-support/global-setup.ts', './src/test-support/chart-global-setup.ts'],
    // Each operand file starts its own etcd members; two files at a time suit a two-core machine.
    maxWorkers: 2,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});

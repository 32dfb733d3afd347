import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One real etcd + kube-apiserver shared by the controller and API tests of this project.
    globalSetup: ['./src/test-support/global-setup.ts', './src/test-support/chart-global-setup.ts'],
    // Each PostgreSQL test file starts its own instances; two files at a time suit a two-core machine.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});

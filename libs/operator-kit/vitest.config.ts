import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One real etcd + kube-apiserver for the entry-point tests.
    globalSetup: ['./src/test-support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

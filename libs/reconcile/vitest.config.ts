import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'examples/**/*.test.ts'],
    // One real etcd + kube-apiserver shared by the integration tests that do not break it.
    globalSetup: ['./src/test-support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

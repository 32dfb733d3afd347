import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One real etcd + kube-apiserver shared by every API-server test file of this project; the
    // operand tests start their own etcd members.
    globalSetup: ['./src/test-support/global-setup.ts'],
    // Each operand file starts its own etcd members; two files at a time suit a two-core machine.
    maxWorkers: 2,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});

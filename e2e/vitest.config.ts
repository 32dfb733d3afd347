import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['suites/**/*.e2e.test.ts'],
    // Suites share one cluster on a two-core machine: one file at a time keeps timings sane.
    fileParallelism: false,
    // Pods start in seconds, but a cold node pulls/unpacks images and schedules slowly.
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});

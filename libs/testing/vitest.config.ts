import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: ['./src/test-global-setup.ts'],
    // Starting servers takes seconds on two cores; the default 5 s is too tight.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

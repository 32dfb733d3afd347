import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // The driver tests start a real control plane and an operator process: seconds on two cores.
    testTimeout: 60_000,
  },
});

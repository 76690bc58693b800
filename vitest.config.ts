import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/fast-check-seed.ts', 'test/support/cleanup.ts'],
    pool: 'forks',
    // Limits, not expectations: the suite shares two cores with whatever else runs, and a test that waits on a slow
    // machine must not fail for it. Tests that start child processes derive theirs from the start wait
    // (test/support/process.ts).
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    // Each file starts its own service on its own fresh database; two at a time suits a 2-core machine.
    maxWorkers: 2,
  },
});

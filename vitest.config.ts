import { defineConfig } from 'vitest/config';

// Two projects so `npm run test:unit` stays instant while integration tests spawn real processes and sockets.
export default defineConfig({
  test: {
    // Test files mostly wait on child processes and sockets: two at a time on 2 cores (vitest's default there is one).
    maxWorkers: 2,
    projects: [
      // The size tests (150,000 records) must finish rather than race a clock: speed is measured in bench/.
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});

import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // tests exercise the sources, not a possibly stale build
    alias: { '@stega/pgque': path.resolve('packages/pgque/src/index.ts') },
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'scripts/test/**/*.test.ts',
      'test-support/**/*.test.ts',
    ],
    globalSetup: ['test-support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});

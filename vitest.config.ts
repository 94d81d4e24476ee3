import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The Redis the tests use: REDIS_TEST_URL, or a throwaway redis-server for the run.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    restoreMocks: true,
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["../packages/devstack/src/vitest-global-setup.ts"],
    include: ["src/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Each file starts a whole stack; running them side by side on 2 cores would skew latencies.
    fileParallelism: false,
  },
});

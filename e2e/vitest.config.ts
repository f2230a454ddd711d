import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Timing assertions meet this VM's occasional whole-process pauses (tens of ms to seconds);
    // a real fault fails every attempt, a pause does not repeat.
    retry: 1,
    globalSetup: ["../packages/devstack/src/vitest-global-setup.ts"],
    include: ["src/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Each file starts a whole stack; running them side by side on 2 cores would skew latencies.
    fileParallelism: false,
  },
});

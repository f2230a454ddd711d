import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Timing assertions meet this VM's occasional whole-process pauses (tens of ms to seconds);
    // a real fault fails every attempt, a pause does not repeat.
    retry: 1,
    globalSetup: ["../../packages/devstack/src/vitest-global-setup.ts"],
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Timing assertions meet this VM's occasional whole-process pauses (tens of ms to seconds);
    // a real fault fails every attempt, a pause does not repeat.
    retry: 2,
    include: ["src/**/*.test.ts"],
    // The slowest test spawns the bin (tsx start-up) and polls a fake server once a second.
    testTimeout: 20_000,
  },
});

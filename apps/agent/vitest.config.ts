import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Timing assertions meet this VM's occasional whole-process pauses (tens of ms to seconds);
    // a real fault fails every attempt, a pause does not repeat.
    retry: 2,
    // Latency assertions need the CPU: files run one after another, not competing with each other.
    fileParallelism: false,
    testTimeout: 15_000,
  },
});

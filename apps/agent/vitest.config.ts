import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Latency assertions need the CPU: files run one after another, not competing with each other.
    fileParallelism: false,
    testTimeout: 15_000,
  },
});

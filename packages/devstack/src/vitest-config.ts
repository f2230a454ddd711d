import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";

type TestOptions = NonNullable<ViteUserConfig["test"]>;

/**
 * The vitest config of every workspace whose tests need PostgreSQL and Redis: one global setup
 * starts them (or uses VOLLEY_TEST_*), tests get the URLs with inject(). Workspaces pass only
 * what differs (timeouts, parallelism). Configs import this file by relative path: vitest bundles
 * relative imports of a config but loads packages natively, which cannot run TypeScript.
 */
export function servicesTestConfig(overrides: TestOptions = {}) {
  return defineConfig({
    test: {
      // Timing assertions meet this VM's occasional whole-process pauses (tens of ms to seconds);
      // a real fault fails every attempt, a pause does not repeat.
      retry: 1,
      globalSetup: [fileURLToPath(new URL("./vitest-global-setup.ts", import.meta.url))],
      include: ["src/**/*.test.ts"],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      ...overrides,
    },
  });
}

import { servicesTestConfig } from "../packages/devstack/src/vitest-config";

export default servicesTestConfig({
  testTimeout: 180_000,
  hookTimeout: 180_000,
  // Each file starts a whole stack; running them side by side on 2 cores would skew latencies.
  fileParallelism: false,
});

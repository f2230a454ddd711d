import { servicesTestConfig } from "../../packages/devstack/src/vitest-config";

// One file at a time: each file flushes "its" Redis database at start, and web has more test files
// than Redis has databases (16), so two files running side by side could flush each other's
// rate-limit counters and queues mid-test.
export default servicesTestConfig({ fileParallelism: false });

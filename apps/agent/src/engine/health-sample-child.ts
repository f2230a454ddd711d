/**
 * Test support (health-monitor.test.ts): one HealthMonitor sample of `ms` of this thread working
 * flat out in 2 ms slices, the event loop turning between them, printed as JSON. Run pinned to a
 * core (taskset) beside other processes, its CPU share drops and its wait for the core shows.
 */
import { HealthMonitor } from "./health-monitor";

const ms = Number(process.argv[2] ?? 400);
const m = new HealthMonitor();
const until = performance.now() + ms;
while (performance.now() < until) {
  const slice = performance.now() + 2;
  while (performance.now() < slice);
  await new Promise((r) => setImmediate(r));
}
console.log(JSON.stringify(m.sample({ maxMs: 0, sends: 100, late: 0, closedLoop: true })));
m.stop();

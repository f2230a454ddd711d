/**
 * Test support: apps/targets' hello-http app in a process of its own, so a saturation test's
 * event-loop readings are the agent's alone and not the server's work on the same loop too.
 * Sends `{ url }` once listening; answers "stats" with the server's own counters. Exits when the
 * parent disconnects.
 */
import { startHelloHttp } from "@volley/targets";

const app = await startHelloHttp();
process.send!({ url: app.url });
process.on("message", (m) => {
  if (m === "stats") process.send!({ stats: app.stats() });
});
process.on("disconnect", () => void app.close().finally(() => process.exit(0)));

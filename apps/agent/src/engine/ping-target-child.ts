/**
 * Test support: the Socket.IO reference target (apps/targets) in a process of its own, so an agent
 * test measures the agent's event loop alone and not the server's work too. Sends `{ url }` once
 * listening; answers "count" with `{ count }`, the pings (and echoes) answered so far. Exits when
 * the parent disconnects.
 */
import { startSocketioEchoServer } from "@volley/targets";

const server = await startSocketioEchoServer({ port: 0 });
process.send!({ url: server.url });
process.on("message", (m) => {
  if (m === "count") process.send!({ count: server.holdStats().count });
});
process.on("disconnect", () => void server.close().finally(() => process.exit(0)));

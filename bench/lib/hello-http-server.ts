/**
 * The bench's HTTP target as a process of its own: apps/targets' hello-http app (any request →
 * 200 `hello`). Prints `hello listening on http://…` and, on SIGTERM, the server's own counters as
 * one JSON line before exiting.
 *
 *   node --import tsx bench/lib/hello-http-server.ts [port=0]
 */
import { startHelloHttp } from "../../apps/targets/src/apps/hello-http";

const app = await startHelloHttp({ port: Number(process.argv[2] ?? 0) });
console.log(`hello listening on ${app.url}`);
process.on("SIGTERM", () => {
  console.log(JSON.stringify(app.stats()));
  void app.close().then(() => process.exit(0));
});

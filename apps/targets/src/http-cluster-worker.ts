/**
 * One `node:cluster` worker of the HTTP cluster target (http-cluster-server.ts forks it): the same
 * HTTP reference server as the single process, listening on the port every worker shares.
 */
import { startHttpTargetServer } from "./http-target-server";
import type { ClusterWorkerMessage, ClusterPrimaryMessage, ClusterWorkerOptions } from "./http-cluster-server";

const send = (m: ClusterWorkerMessage) => process.send?.(m);
// The primary passes the options as the one argument: this process has no env.ts of its own.
const options = JSON.parse(process.argv[2] ?? "{}") as ClusterWorkerOptions;

try {
  const server = await startHttpTargetServer(options);
  process.on("message", (m: ClusterPrimaryMessage) => {
    if (m.type === "stall") server.stall(m.ms);
    else if (m.type === "close") void server.close().then(() => process.exit(0));
  });
  send({ type: "listening", port: server.port });
} catch (err) {
  send({ type: "failed", error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}
// The primary is gone (killed outright): nobody would ever stop this worker.
process.on("disconnect", () => process.exit(0));

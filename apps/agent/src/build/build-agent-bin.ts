/**
 * `npm run build -w @volley/agent` (run by `npm run setup` and before the tests that depend on it):
 * the agent compiled into dist/volley-agent.mjs, its npm dependencies inside, each lazily imported
 * part (a driver and its protocol client, the CLI, the daemon, the engine) a chunk beside it that
 * is parsed only when first imported (engine threads start from the same entry and load only the
 * engine's chunks), which
 * bin/volley-agent.js runs while its sources are unchanged (@volley/devstack/build-bin): no
 * TypeScript compiled at every start.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildBin } from "@volley/devstack/build-bin";

const AGENT_DIR = fileURLToPath(new URL("../..", import.meta.url));

await buildBin({ entry: path.join(AGENT_DIR, "src", "main.ts"), outfile: path.join(AGENT_DIR, "dist", "volley-agent.mjs"), splitting: true });
console.log("compiled the agent into dist/volley-agent.mjs");

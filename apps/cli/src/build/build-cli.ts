/**
 * `npm run build -w @volley/cli` (run by `npm run setup` and before the tests that depend on it):
 * the CLI compiled into dist/volley.mjs, every dependency inside, which bin/volley.js runs while
 * its sources are unchanged (@volley/devstack/build-bin): `volley validate` in ~0.2 s instead of ~2 s.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildBin } from "@volley/devstack/build-bin";

const CLI_DIR = fileURLToPath(new URL("../..", import.meta.url));

await buildBin({ entry: path.join(CLI_DIR, "src", "main.ts"), outfile: path.join(CLI_DIR, "dist", "volley.mjs") });
console.log("compiled the CLI into dist/volley.mjs");

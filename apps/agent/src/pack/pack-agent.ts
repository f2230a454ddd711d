/**
 * `npm run pack -w @volley/agent [outDir]`: builds apps/agent/dist/volley-agent.tgz (+ .sha256), the
 * package the agent installer and image install (see agent-package.ts). Run by `npm run setup`;
 * web runs it on demand when the tarball is missing.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packAgent } from "./agent-package";

const outDir = path.resolve(process.argv[2] ?? fileURLToPath(new URL("../../dist", import.meta.url)));
const { tarball, sha256 } = await packAgent(outDir);
console.log(`packed ${tarball} (sha256 ${sha256})`);

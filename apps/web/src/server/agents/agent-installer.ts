import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ApiError } from "../http/errors";
import { findRepoFile } from "../http/repo-file";

/** infra/agent/install.sh relative to the repository root (the web image keeps the whole repository). */
const INSTALLER = join("infra", "agent", "install.sh");

let cached: string | undefined;

/**
 * The agent installer, served at /install-agent.sh so the Agents page's one-liner fetches the very
 * script this checkout ships. Web runs from apps/web (npm start, the image) or the repository
 * root, so the script is looked for from the working directory upwards.
 */
export async function readAgentInstaller(): Promise<string> {
  if (cached !== undefined) return cached;
  const { path, tried } = findRepoFile(INSTALLER);
  if (path) {
    cached = await readFile(path, "utf8");
    return cached;
  }
  throw new ApiError(
    503,
    "unavailable",
    `the agent installer is not part of this web deployment (looked for ${tried.join(", ")}); run web from the Volley repository or its image, or copy infra/agent/install.sh to the agent host and run it there`,
  );
}

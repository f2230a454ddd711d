import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { repoRoot } from "../env";
import { infraDir, type DeployableApp } from "./infra-test-kit";

/** Readers for infra/compose.yaml and infra/docker/*.Dockerfile, for the tests beside them (no Docker here). */

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string | number | boolean>;
  ports?: string[];
  /** `service:<name>`: the container joins that service's network namespace. */
  network_mode?: string;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

export const composePath = path.join(infraDir, "compose.yaml");

export function readCompose(): { services: Record<string, ComposeService> } {
  return parse(readFileSync(composePath, "utf8"), { merge: true }) as { services: Record<string, ComposeService> };
}

/**
 * Compose's interpolation: ${VAR:-default} → default when unset, ${VAR} → "", and ${VAR:?message}
 * (or ${VAR?message}) fails like `docker compose` does when the variable is missing.
 */
export function interpolate(value: string, vars: Record<string, string> = {}): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (_m, name: string, colon: string, op?: string, arg?: string) => {
    const v = vars[name];
    const missing = v === undefined || (colon === ":" && v === "");
    if (op === "?") {
      if (missing) throw new Error(`required variable ${name} is missing a value: ${arg}`);
      return v as string;
    }
    if (op === undefined) return v ?? "";
    return missing ? (arg ?? "") : (v as string);
  });
}

/** A service's environment as its container gets it, defaults applied. */
export function serviceEnv(service: ComposeService, vars: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
}

/** The app a compose service builds, from its Dockerfile's name (infra/docker/<app>.Dockerfile). */
export function appOf(service: ComposeService): DeployableApp | undefined {
  const m = /^infra\/docker\/(web|hub|agent|targets)\.Dockerfile$/.exec(service.build?.dockerfile ?? "");
  return m?.[1] as DeployableApp | undefined;
}

export interface DockerInstruction {
  stage: number;
  op: string;
  args: string;
}

/** Instructions of a Dockerfile, continuation lines joined, comments dropped; `stage` counts FROMs from 0. */
export function readDockerfile(app: DeployableApp): DockerInstruction[] {
  const text = readFileSync(path.join(infraDir, "docker", `${app}.Dockerfile`), "utf8");
  const logical: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (/^\s*#/.test(line)) continue;
    current += line.replace(/\\$/, " ");
    if (!line.endsWith("\\")) {
      if (current.trim()) logical.push(current.trim());
      current = "";
    }
  }
  let stage = -1;
  return logical.map((l) => {
    const [op = "", ...rest] = l.split(/\s+/);
    if (op.toUpperCase() === "FROM") stage++;
    return { stage, op: op.toUpperCase(), args: rest.join(" ") };
  });
}

/** The final stage's instructions: what the image runs with. */
export function finalStage(instructions: DockerInstruction[]): DockerInstruction[] {
  const last = Math.max(...instructions.map((i) => i.stage));
  return instructions.filter((i) => i.stage === last);
}

/** Maps a path inside the image (/app/…) to the repository. */
export function repoPathOf(imagePath: string): string {
  return path.join(repoRoot, path.relative("/app", imagePath));
}

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../env";

/** The deployable apps whose environment infra/ sets (compose, Helm, the agent installer). */
export type DeployableApp = "web" | "hub" | "agent" | "targets";

export const infraDir = path.join(repoRoot, "infra");

/**
 * Imports apps/<app>/src/env.ts in a child process whose whole environment is `env` (plus PATH)
 * and reads every variable the way the app does at start: `loadEnv()` where the app has one, else
 * every exported zero-argument getter (web reads per request). So compose, the chart and the
 * installer are checked against the apps' real zod schemas, not a copy of them.
 */
export function checkAppEnv(app: DeployableApp, env: Record<string, string>): { ok: boolean; output: string } {
  const script = `
    import { pathToFileURL } from "node:url";
    const m = await import(pathToFileURL(process.argv[1]).href);
    if (typeof m.loadEnv === "function") m.loadEnv();
    else for (const f of Object.values(m)) {
      if (typeof f !== "function" || f.length !== 0 || /^class\\b/.test(String(f))) continue;
      const r = f();
      if (r && typeof r === "object" && typeof r.warning === "string") { console.error(r.warning); process.exit(1); }
    }
    console.log("env ok");`;
  const appDir = path.join(repoRoot, "apps", app);
  const res = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, path.join(appDir, "src", "env.ts")], {
    cwd: appDir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  const output = `${res.stdout ?? ""}${res.stderr ?? ""}${res.error ? String(res.error) : ""}`.trim();
  return { ok: res.status === 0 && output.includes("env ok"), output };
}

/**
 * Variable names apps/<app>/src/env.ts reads: the keys of its schema object (UPPER_SNAKE keys
 * followed by a colon) and names passed to a `raw("NAME")` getter (web reads per request). Used
 * to catch a misspelt or renamed variable in compose or the chart.
 */
export function envNamesRead(app: DeployableApp): Set<string> {
  const src = readFileSync(path.join(repoRoot, "apps", app, "src", "env.ts"), "utf8");
  const keys = [...src.matchAll(/^\s*([A-Z][A-Z0-9_]*[A-Z0-9]):/gm)].map((m) => m[1] as string);
  const getters = [...src.matchAll(/\braw\("([A-Z][A-Z0-9_]*)"\)/g)].map((m) => m[1] as string);
  return new Set([...keys, ...getters]);
}

/** Parses a systemd EnvironmentFile as the installer writes it: KEY="value" with \\ and \" escaped. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"$/.exec(line);
    if (!m) throw new Error(`not a KEY="value" line: ${line.replace(/=.*/, "=…")}`);
    out[m[1] as string] = (m[2] as string).replace(/\\(.)/g, "$1");
  }
  return out;
}

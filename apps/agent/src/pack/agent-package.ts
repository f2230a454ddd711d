import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleNodeApp } from "@volley/devstack/bundle-node-app";

/** apps/agent: the package being packed. */
const AGENT_DIR = fileURLToPath(new URL("../..", import.meta.url));
/** The workspaces bundled into the agent's one file; everything else they import comes from npm. */
const WORKSPACE_DEPS = ["@volley/contracts", "@volley/metrics"];
export const AGENT_TARBALL = "volley-agent.tgz";

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

const readManifest = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest;

/** `name`'s package.json as Node would find it from apps/agent (read directly: `exports` may not list it). */
function manifestOf(name: string): Manifest {
  let dir = AGENT_DIR;
  for (;;) {
    const file = path.join(dir, "node_modules", name, "package.json");
    if (existsSync(file)) return readManifest(file);
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`${name} is not installed; run npm install`);
    dir = up;
  }
}

/**
 * The third-party dependencies of the agent and the workspaces bundled into it, each pinned to the
 * version installed here (what the tests ran against); npm aliases (`npm:pkg@range`) keep their form.
 */
export function thirdPartyDependencies(): Record<string, string> {
  const manifests = [readManifest(path.join(AGENT_DIR, "package.json")), ...WORKSPACE_DEPS.map(manifestOf)];
  const deps: Record<string, string> = {};
  for (const m of manifests) {
    for (const [name, range] of Object.entries(m.dependencies ?? {})) {
      if (name.startsWith("@volley/")) continue;
      const installed = manifestOf(name).version;
      const alias = /^npm:(.+)@[^@]+$/.exec(range);
      deps[name] = alias ? `npm:${alias[1]}@${installed}` : installed;
    }
  }
  return Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a.localeCompare(b)));
}

export interface PackedAgent {
  tarball: string;
  sha256: string;
}

/**
 * Packs the agent for hosts that have only Node: apps/agent and the workspaces it uses bundled
 * into ES modules in lib/ (esbuild, the same compiler tsx runs: an entry and the chunks it loads on
 * first use), started by a small bin that sets the agent's V8 flags first; a package.json naming only the real
 * npm dependencies, packed by `npm pack` into `<outDir>/volley-agent.tgz`, with its SHA-256 in
 * `volley-agent.tgz.sha256` (sha256sum format). Web serves both; the installer and the agent image
 * install from them, so an agent host needs nothing from the npm registry but third-party packages.
 */
export async function packAgent(outDir: string): Promise<PackedAgent> {
  const own = readManifest(path.join(AGENT_DIR, "package.json"));
  const dependencies = thirdPartyDependencies();
  const stage = mkdtempSync(path.join(tmpdir(), "volley-agent-pack-"));
  try {
    mkdirSync(path.join(stage, "bin"));
    mkdirSync(path.join(stage, "lib"));
    await bundleNodeApp({
      entry: path.join(AGENT_DIR, "src", "main.ts"),
      outfile: path.join(stage, "lib", "volley-agent.mjs"),
      external: Object.keys(dependencies),
      compact: true,
      // As the repo's bin: a process loads only what its role needs (an engine thread not the CLI or hub link).
      splitting: true,
    });
    // The bin sets the agent's V8 flags (bin/v8-flags.mjs, as the repo's bin does) before the
    // bundle and its dependencies load, which is why the bundle is imported, not the bin itself.
    copyFileSync(path.join(AGENT_DIR, "bin", "v8-flags.mjs"), path.join(stage, "bin", "v8-flags.mjs"));
    const bin = path.join(stage, "bin", "volley-agent.js");
    writeFileSync(bin, '#!/usr/bin/env node\nimport "./v8-flags.mjs";\n\nawait import("../lib/volley-agent.mjs");\n');
    chmodSync(bin, 0o755);
    writeFileSync(
      path.join(stage, "package.json"),
      `${JSON.stringify(
        {
          name: own.name,
          version: own.version,
          description: "Volley load-test agent (bundled from this Volley install)",
          type: "module",
          bin: { "volley-agent": "bin/volley-agent.js" },
          engines: { node: ">=20.9" },
          dependencies,
        },
        null,
        2,
      )}\n`,
    );
    mkdirSync(outDir, { recursive: true });
    const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", stage], { cwd: stage, encoding: "utf8" });
    if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr || packed.stdout}`);
    const name = packed.stdout.trim().split("\n").pop()!;
    const tarball = path.join(outDir, AGENT_TARBALL);
    // Written beside, then renamed: a web request never reads a half-written tarball.
    renameSync(path.join(stage, name), `${tarball}.tmp`);
    renameSync(`${tarball}.tmp`, tarball);
    const sha256 = createHash("sha256").update(readFileSync(tarball)).digest("hex");
    writeFileSync(`${tarball}.sha256.tmp`, `${sha256}  ${AGENT_TARBALL}\n`);
    renameSync(`${tarball}.sha256.tmp`, `${tarball}.sha256`);
    return { tarball, sha256 };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

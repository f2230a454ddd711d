import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AGENT_VERSION } from "../version";
import { packAgent } from "./agent-package";

const out = mkdtempSync(path.join(tmpdir(), "volley-agent-pack-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the packed agent", () => {
  it("is a bundle (split at its dynamic imports), its bin and a package.json naming only npm dependencies, pinned, with its sha256 beside it", async () => {
    const { tarball, sha256 } = await packAgent(out);
    expect(path.basename(tarball)).toBe("volley-agent.tgz");
    expect(createHash("sha256").update(readFileSync(tarball)).digest("hex")).toBe(sha256);
    expect(readFileSync(`${tarball}.sha256`, "utf8")).toBe(`${sha256}  volley-agent.tgz\n`);

    const list = spawnSync("tar", ["tzf", tarball], { encoding: "utf8" });
    const files = list.stdout.trim().split("\n").sort();
    // The bundle's entry and the chunks it loads on first use (split at its dynamic imports).
    const chunks = files.filter((f) => /^package\/lib\/volley-agent-[A-Z0-9]+\.mjs$/.test(f));
    expect(chunks.length).toBeGreaterThan(0);
    expect(files.filter((f) => !chunks.includes(f))).toEqual([
      "package/bin/v8-flags.mjs",
      "package/bin/volley-agent.js",
      "package/lib/volley-agent.mjs",
      "package/package.json",
    ]);
    const extract = spawnSync("tar", ["xzf", tarball, "-C", out], { encoding: "utf8" });
    expect(extract.status, extract.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(out, "package", "package.json"), "utf8")) as {
      name: string;
      version: string;
      bin: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(manifest).toMatchObject({ name: "@volley/agent", version: AGENT_VERSION, bin: { "volley-agent": "bin/volley-agent.js" } });
    // The workspaces are inside the bundle; what is left is what npm installs, each at the version tested here.
    const deps = Object.keys(manifest.dependencies);
    expect(deps.filter((d) => d.startsWith("@volley/"))).toEqual([]);
    expect(deps).toEqual(expect.arrayContaining(["ws", "socket.io-client", "socket.io-client-v2", "zod", "hdr-histogram-js", "yaml"]));
    expect(manifest.dependencies["socket.io-client-v2"]).toMatch(/^npm:socket\.io-client@2\.\d+\.\d+$/);
    for (const [name, spec] of Object.entries(manifest.dependencies)) expect(spec, name).toMatch(/^(npm:[^@]+@)?\d+\.\d+\.\d+/);

    const bin = readFileSync(path.join(out, "package", "bin", "volley-agent.js"), "utf8");
    expect(bin.startsWith("#!/usr/bin/env node\n")).toBe(true);
    const bundle = readFileSync(path.join(out, "package", "lib", "volley-agent.mjs"), "utf8");
    expect(bundle).not.toMatch(/from "@volley\//);
    expect(chunks.every((c) => !readFileSync(path.join(out, c), "utf8").match(/from "@volley\//))).toBe(true);
    for (const file of ["bin/volley-agent.js", "bin/v8-flags.mjs", "lib/volley-agent.mjs"])
      expect(spawnSync(process.execPath, ["--check", path.join(out, "package", file)]).status, file).toBe(0);
  }, 60_000);
});

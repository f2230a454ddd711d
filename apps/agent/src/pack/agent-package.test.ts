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
  it("is one bundled bin plus a package.json naming only npm dependencies, pinned, with its sha256 beside it", async () => {
    const { tarball, sha256 } = await packAgent(out);
    expect(path.basename(tarball)).toBe("volley-agent.tgz");
    expect(createHash("sha256").update(readFileSync(tarball)).digest("hex")).toBe(sha256);
    expect(readFileSync(`${tarball}.sha256`, "utf8")).toBe(`${sha256}  volley-agent.tgz\n`);

    const list = spawnSync("tar", ["tzf", tarball], { encoding: "utf8" });
    expect(list.stdout.trim().split("\n").sort()).toEqual(["package/bin/volley-agent.js", "package/package.json"]);
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
    expect(bin).not.toMatch(/from "@volley\//);
    expect(spawnSync(process.execPath, ["--check", path.join(out, "package", "bin", "volley-agent.js")]).status).toBe(0);
  }, 60_000);
});

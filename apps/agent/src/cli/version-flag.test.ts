import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AGENT_VERSION } from "../version";

const bin = new URL("../../bin/volley-agent.js", import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("volley-agent --version", () => {
  // The bin answers it before tsx loads (bench: 0.1 s against ~2 s); both paths must say the same.
  it.each(["--version", "-V"])("%s prints the package's version from the bin", (flag) => {
    expect(execFileSync(process.execPath, [bin, flag], { encoding: "utf8" })).toBe(`${version}\n`);
  });

  it("the CLI itself knows the same version (its --help lists the flag)", () => {
    expect(AGENT_VERSION).toBe(version);
    expect(execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" })).toMatch(/-V, --version/);
  });
});

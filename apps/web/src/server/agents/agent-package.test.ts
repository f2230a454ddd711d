import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { agentDockerfile, agentPackage } from "./agent-package";

describe("the agent package web serves", () => {
  it("is this checkout's packed agent with its sha256 line, and the agent Dockerfile pins exactly that package", async () => {
    const { tarball, sha256Line } = await agentPackage();
    const sha = createHash("sha256").update(tarball).digest("hex");
    expect(sha256Line).toBe(`${sha}  volley-agent.tgz\n`);
    // gzip magic: a tarball, not an error page.
    expect([...tarball.subarray(0, 2)]).toEqual([0x1f, 0x8b]);

    const dockerfile = await agentDockerfile("https://volley.example.com");
    expect(dockerfile).toContain(`\nADD --checksum=sha256:${sha} https://volley.example.com/agent/volley-agent.tgz /tmp/volley-agent.tgz\n`);
    expect(dockerfile).toMatch(/\nRUN npm install --global [^\n]*\/tmp\/volley-agent\.tgz/);
    expect(dockerfile).toMatch(/\nUSER node\n/);
    expect(dockerfile).toMatch(/\nCMD \["volley-agent", "daemon"\]\n$/);
    // BuildKit's checksum flag needs the current Dockerfile syntax.
    expect(dockerfile.startsWith("# syntax=docker/dockerfile:1\n")).toBe(true);
  }, 120_000);
});

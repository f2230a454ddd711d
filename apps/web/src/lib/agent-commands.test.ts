import { describe, expect, it } from "vitest";
import { agentCommands, shellWord } from "./agent-commands";

describe("agent install commands", () => {
  const commands = agentCommands({ webOrigin: "https://volley.example.com/", hubUrl: "https://hub.example.com:8443", secret: "vat_AbC-123_xyz" });

  it("fills the installer one-liner with web's script URL, the token, the hub and web's agent package, using install.sh's own flags", () => {
    expect(commands.script).toBe(
      "curl -fsSL https://volley.example.com/install-agent.sh | bash -s -- --token vat_AbC-123_xyz --hub https://hub.example.com:8443 --package-url https://volley.example.com/agent/volley-agent.tgz",
    );
  });

  it("gives docker and the CLI the two variables the agent reads", () => {
    expect(commands.docker).toMatch(/^curl -fsSL https:\/\/volley\.example\.com\/agent\/Dockerfile \| docker build -t volley-agent - && docker run /);
    expect(commands.docker).toContain("-e HUB_URL=https://hub.example.com:8443 -e AGENT_TOKEN=vat_AbC-123_xyz volley-agent");
    expect(commands.cli).toBe("HUB_URL=https://hub.example.com:8443 AGENT_TOKEN=vat_AbC-123_xyz volley-agent daemon");
  });

  it("quotes anything a shell would split or expand", () => {
    expect(shellWord("a b")).toBe("'a b'");
    expect(shellWord("it's$HOME")).toBe(`'it'\\''s$HOME'`);
    expect(shellWord("http://[::1]:3001")).toBe("'http://[::1]:3001'");
  });
});

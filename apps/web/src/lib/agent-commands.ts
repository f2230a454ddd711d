/**
 * The commands the Agents page prints after a join token is created. Each one gives the agent the
 * same two settings apps/agent/src/env.ts reads — HUB_URL and AGENT_TOKEN — and nothing else: the
 * token decides the agent's org and pool at the hub, and the name defaults to the host name. The
 * agent itself comes from this Volley install: web serves it packed at /agent/volley-agent.tgz.
 */

/** Where web serves the packed agent (apps/web/src/app/agent/volley-agent.tgz); its checksum is at `.sha256` beside it. */
export const AGENT_PACKAGE_PATH = "/agent/volley-agent.tgz";

export interface AgentCommandInput {
  /** Web's origin, which serves /install-agent.sh and the agent package /agent/volley-agent.tgz. */
  webOrigin: string;
  /** The URL agents dial (VOLLEY_HUB_PUBLIC_URL, or web's origin + /hub, which web relays to the hub). */
  hubUrl: string;
  /** The join token's secret (vat_…). */
  secret: string;
}

export interface AgentCommands {
  /**
   * infra/agent/install.sh through curl, installing web's agent package: a systemd service where
   * systemd runs, else a launcher to run in the foreground or under the host's own supervisor. No
   * `sudo` in the line: the script asks for it itself only when it is not root (a root shell in a
   * container has no sudo).
   */
  script: string;
  /** The agent image, built from web's /agent/Dockerfile (the same package), host networking so 127.0.0.1 targets and the full port range work. */
  docker: string;
  /** The agent CLI in the foreground, under your own supervisor. */
  cli: string;
}

/** Single-quotes a shell word unless it is made of characters no shell treats specially. */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function agentCommands({ webOrigin, hubUrl, secret }: AgentCommandInput): AgentCommands {
  const hub = shellWord(hubUrl);
  const token = shellWord(secret);
  const web = webOrigin.replace(/\/+$/, "");
  return {
    script: `curl -fsSL ${shellWord(`${web}/install-agent.sh`)} | bash -s -- --token ${token} --hub ${hub} --package-url ${shellWord(`${web}${AGENT_PACKAGE_PATH}`)}`,
    docker: `curl -fsSL ${shellWord(`${web}/agent/Dockerfile`)} | docker build -t volley-agent - && docker run -d --name volley-agent --restart unless-stopped --network host --ulimit nofile=1048576:1048576 -e HUB_URL=${hub} -e AGENT_TOKEN=${token} volley-agent`,
    cli: `HUB_URL=${hub} AGENT_TOKEN=${token} volley-agent daemon`,
  };
}

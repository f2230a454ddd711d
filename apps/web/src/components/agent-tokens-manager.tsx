"use client";

import { CredentialList } from "./credential-list";
import type { AgentToken } from "@volley/contracts";
import { useState, type FormEvent } from "react";
import { agentCommands, type AgentCommands } from "../lib/agent-commands";
import { apiFetch, ApiRequestError } from "../lib/api-client";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

const COMMANDS: { key: keyof AgentCommands; title: string; note: string }[] = [
  {
    key: "script",
    title: "Linux host",
    note: "Installs this Volley's agent (downloaded from here, checksum verified) into /opt/volley-agent. Needs Node.js 20+ and curl; as root, or it asks sudo. With systemd it runs as the volley-agent service; without (containers, WSL) it prints the one command to run it in the foreground or under your own supervisor. Run it again to upgrade or change the token; --uninstall removes it.",
  },
  {
    key: "docker",
    title: "Docker",
    note: "Builds the agent image from this Volley's agent package (checksum pinned), then runs it. Host networking gives it the machine's full port range and lets it reach targets on 127.0.0.1.",
  },
  {
    key: "cli",
    title: "volley-agent in the foreground",
    note: "From a Volley checkout (npx volley-agent daemon) or wherever the agent is installed; keep it running under your own supervisor.",
  },
];

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="button"
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(
          () => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
          },
          () => {},
        )
      }
    >
      {copied ? "Copied" : "Copy"}
    </button>
  );
}

/**
 * "Add agent": creates a join token and prints the commands that enrol a machine with it (the
 * secret is shown here once); below, the org's join tokens with revoke.
 */
export function AgentTokensManager({
  initialTokens,
  webOrigin,
  hubUrl,
  loopbackOnly,
  otherAddresses,
}: {
  initialTokens: AgentToken[];
  webOrigin: string;
  hubUrl: string;
  loopbackOnly: boolean;
  otherAddresses: string[];
}) {
  const [tokens, setTokens] = useState(initialTokens);
  const [created, setCreated] = useState<{ token: AgentToken; commands: AgentCommands } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = async () => setTokens((await apiFetch<{ tokens: AgentToken[] }>("/api/v1/agent-tokens")).tokens);

  async function create(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const pool = String(form.get("pool") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      const res = await apiFetch<{ token: AgentToken; secret: string }>("/api/v1/agent-tokens", {
        method: "POST",
        body: JSON.stringify({ name: String(form.get("name") ?? ""), ...(pool ? { pool } : {}) }),
      });
      setCreated({ token: res.token, commands: agentCommands({ webOrigin, hubUrl, secret: res.secret }) });
      formEl.reset();
      await reload();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(token: AgentToken) {
    if (!window.confirm(`Revoke "${token.name}"? No new agent can join with it, and agents that joined with it are disconnected within seconds.`)) return;
    setError(null);
    try {
      await apiFetch(`/api/v1/agent-tokens/${token.id}`, { method: "DELETE" });
      if (created?.token.id === token.id) setCreated(null);
      await reload();
    } catch (err) {
      setError(describe(err));
    }
  }

  return (
    <>
      <section className="panel" aria-labelledby="add-agent">
        <h2 className="panel-title" id="add-agent">
          Add agent
        </h2>
        <p className="small muted">
          Create a join token, then run one of the commands it gives you on the machine that should generate load. Agents joining with the token belong to this
          organization and its pool; one token can enrol any number of machines.
        </p>
        {loopbackOnly && (
          <div className="callout warn" role="note" data-testid="agent-loopback-warning">
            <strong>Only this machine can use these commands.</strong> They name <code className="mono">{new URL(hubUrl).host}</code>, which another host cannot
            reach. Open this page by an address other machines reach
            {otherAddresses.length > 0 && (
              <>
                {" "}
                (this machine has{" "}
                {otherAddresses.map((a, i) => (
                  <span key={a}>
                    {i > 0 && ", "}
                    <a href={`${a}/agents`}>{a}</a>
                  </span>
                ))}
                )
              </>
            )}{" "}
            — or set <code className="mono">VOLLEY_PUBLIC_URL</code> — and the commands will name it.
          </div>
        )}
        <form className="inline-form" onSubmit={create}>
          <label>
            Token name
            <input type="text" name="name" placeholder="eu-west load generators" required maxLength={100} />
          </label>
          <label>
            Pool
            <input type="text" name="pool" placeholder="default" pattern="[a-z0-9][a-z0-9\-]{0,62}" title="lowercase letters, digits and dashes" />
          </label>
          <button type="submit" className="button primary" disabled={busy}>
            Create join token
          </button>
        </form>
        {error && (
          <p className="bad" role="alert">
            {error}
          </p>
        )}
        {created && (
          <div className="agent-install" role="status">
            <p>
              Join token <strong>{created.token.name}</strong> for pool <code className="mono">{created.token.pool}</code> — the commands hold its secret; copy
              one now, it is not shown again. Agents dial the hub at <code className="mono">{hubUrl}</code>.
            </p>
            {COMMANDS.map((c) => (
              <div key={c.key} className="agent-command">
                <div className="agent-command-head">
                  <h3 className="agent-command-title">{c.title}</h3>
                  <CopyButton text={created.commands[c.key]} />
                </div>
                <pre className="code-block secret-once" data-testid={`agent-command-${c.key}`}>
                  {created.commands[c.key]}
                </pre>
                <p className="small muted">{c.note}</p>
              </div>
            ))}
          </div>
        )}
      </section>
      <CredentialList
        title="Join tokens"
        empty="No join tokens yet."
        tokens={tokens}
        extra={{ header: "Pool", cell: (t) => <span className="mono">{t.pool}</span> }}
        onRevoke={(t) => void revoke(t)}
      />
    </>
  );
}

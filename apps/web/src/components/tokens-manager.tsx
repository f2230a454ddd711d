"use client";

import { CredentialList } from "./credential-list";
import type { ApiToken } from "@volley/contracts";
import { useState, type FormEvent } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

/** The org's API tokens: create (the secret is shown once, here), list with last use, revoke. */
export function TokensManager({ initialTokens }: { initialTokens: ApiToken[] }) {
  const [tokens, setTokens] = useState(initialTokens);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = async () => setTokens((await apiFetch<{ tokens: ApiToken[] }>("/api/v1/tokens")).tokens);

  async function create(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const scopes = ["read", "run"].filter((s) => form.get(`scope-${s}`) === "on");
    setBusy(true);
    setError(null);
    try {
      const res = await apiFetch<{ token: ApiToken; secret: string }>("/api/v1/tokens", {
        method: "POST",
        body: JSON.stringify({ name: String(form.get("name") ?? ""), scopes }),
      });
      setCreated({ name: res.token.name, secret: res.secret });
      formEl.reset();
      await reload();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(token: ApiToken) {
    if (!window.confirm(`Revoke "${token.name}"? Anything using it stops working at once.`)) return;
    setError(null);
    try {
      await apiFetch(`/api/v1/tokens/${token.id}`, { method: "DELETE" });
      await reload();
    } catch (err) {
      setError(describe(err));
    }
  }

  return (
    <>
      <section className="panel">
        <h2 className="panel-title">Create a token</h2>
        <form className="inline-form" onSubmit={create}>
          <label>
            Name
            <input type="text" name="name" placeholder="ci" required maxLength={100} />
          </label>
          <label>
            <span>
              <input type="checkbox" name="scope-read" defaultChecked /> read
            </span>
          </label>
          <label>
            <span>
              <input type="checkbox" name="scope-run" defaultChecked /> run
            </span>
          </label>
          <button type="submit" className="button primary" disabled={busy}>
            Create token
          </button>
        </form>
        {error && (
          <p className="bad" role="alert">
            {error}
          </p>
        )}
        {created && (
          <div className="banner" role="status">
            <p>
              Token <strong>{created.name}</strong> — copy it now, it is not shown again:
            </p>
            <pre className="code-block secret-once" data-testid="new-token-secret">
              {created.secret}
            </pre>
          </div>
        )}
      </section>
      <CredentialList
        title="Tokens"
        empty="No tokens yet."
        tokens={tokens}
        extra={{ header: "Scopes", cell: (t) => t.scopes.join(", ") }}
        onRevoke={(t) => void revoke(t)}
      />
    </>
  );
}

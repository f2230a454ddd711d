"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";

/** Removes an offline agent (DELETE /api/v1/agents/{id}), then re-renders the Agents page. */
export function RemoveAgentButton({ id, name }: { id: string; name: string }) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function remove() {
    if (!window.confirm(`Remove agent "${name}" from the list? Runs it took part in keep their data; if it connects again, it reappears as a new agent.`))
      return;
    setBusy(true);
    setError(null);
    try {
      await apiFetch(`/api/v1/agents/${encodeURIComponent(id)}`, { method: "DELETE" });
      router.refresh();
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button type="button" className="button" disabled={busy} onClick={() => void remove()} aria-label={`Remove agent ${name}`}>
        Remove
      </button>
      {error && (
        <p className="bad small" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

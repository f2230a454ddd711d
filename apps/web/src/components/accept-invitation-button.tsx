"use client";

import { useState } from "react";
import { orgRequest } from "../lib/org-client";

/** Accepts the invitation through better-auth (which also makes the org the session's active one), then opens its runs. */
export function AcceptInvitationButton({ invitationId, orgName }: { invitationId: string; orgName: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function accept() {
    setBusy(true);
    setError(null);
    try {
      await orgRequest("accept-invitation", { invitationId });
      // A full load, so every server page renders in the joined org.
      window.location.assign("/");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <>
      <button type="button" className="button primary" disabled={busy} onClick={() => void accept()}>
        Join {orgName}
      </button>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

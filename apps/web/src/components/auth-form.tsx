"use client";

import { useState, type FormEvent } from "react";
import { MIN_PASSWORD_LENGTH } from "@/lib/password-rules";

/** What better-auth or our own handler answered on failure: `{ message }` or `{ error: { message } }`. */
function failureMessage(status: number, data: unknown): string {
  const d = data as { message?: unknown; error?: { message?: unknown } } | null;
  if (typeof d?.error?.message === "string") return d.error.message;
  if (typeof d?.message === "string" && d.message) return d.message;
  return `the server answered ${status}; try again`;
}

/** Email + password form posting to better-auth's /api/auth/sign-in/email or /sign-up/email, then to `next` (a checked local path) or home. */
export function AuthForm({ mode, next = "/" }: { mode: "sign-in" | "sign-up"; next?: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const body: Record<string, string> = { email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") };
    if (mode === "sign-up") body.name = String(form.get("name") ?? "");
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(`/api/auth/${mode}/email`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const data: unknown = await res.json().catch(() => null);
      if (!res.ok) {
        setError(failureMessage(res.status, data));
        return;
      }
      // A full load, so every server page renders with the new session cookie.
      window.location.assign(next);
    } catch (err) {
      setError(`cannot reach the Volley server (${err instanceof Error ? err.message : String(err)})`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel auth-form" onSubmit={submit} noValidate>
      {mode === "sign-up" && (
        <label>
          Name
          <input name="name" autoComplete="name" required />
        </label>
      )}
      <label>
        Email
        <input name="email" type="email" autoComplete="email" required />
      </label>
      <label>
        Password
        <input
          name="password"
          type="password"
          autoComplete={mode === "sign-up" ? "new-password" : "current-password"}
          minLength={MIN_PASSWORD_LENGTH}
          required
          aria-describedby={mode === "sign-up" ? "password-rule" : undefined}
        />
        {mode === "sign-up" && (
          <small id="password-rule" className="muted">
            At least {MIN_PASSWORD_LENGTH} characters.
          </small>
        )}
      </label>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={busy}>
        {mode === "sign-up" ? "Create account" : "Sign in"}
      </button>
    </form>
  );
}

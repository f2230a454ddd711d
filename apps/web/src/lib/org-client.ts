/**
 * Calls to better-auth's organization endpoints (/api/auth/organization/…) from the browser. They
 * answer `{ message, code }` on failure (our own auth route answers `{ error: { message } }` when it
 * fails before better-auth does); either way the thrown Error carries a message fit to show.
 */
export async function orgRequest<T>(endpoint: string, body: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api/auth/organization/${endpoint}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch (err) {
    throw new Error(`cannot reach the Volley server (${err instanceof Error ? err.message : String(err)})`);
  }
  const data: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const d = data as { message?: unknown; error?: { message?: unknown } } | null;
    const message =
      typeof d?.error?.message === "string" ? d.error.message : typeof d?.message === "string" && d.message ? d.message : `the server answered ${res.status}`;
    throw new Error(message);
  }
  return data as T;
}

import { getAuth } from "@/server/auth/better-auth";
import { resolveShare } from "@/server/shares/run-shares";

/**
 * GET /share/{id}: a run's read-only link. Signed out → sign in, then back here. A member of the
 * run's org (any role) is sent to the shared run's page (/share/{id}/view), which shows it
 * read-only in its own org: their active org stays what it was, so a link opened in one tab does
 * not move what every other tab of theirs shows or writes to. Anyone else gets the same 404 as
 * for a revoked or unknown link, so a link says nothing to outsiders.
 */
export async function GET(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await ctx.params;
  const here = `/share/${encodeURIComponent(id)}`;
  const redirect = (to: string) => new Response(null, { status: 303, headers: { location: to, "cache-control": "no-store" } });
  const auth = getAuth(req.headers);
  const session = req.headers.get("cookie") ? await auth.api.getSession({ headers: req.headers }) : null;
  if (!session) return redirect(`/sign-in?next=${encodeURIComponent(here)}`);
  const target = await resolveShare(id, { userId: session.user.id });
  if (!target) {
    return new Response(
      `<!doctype html><meta charset="utf-8"><title>Link not found</title><p>This link does not exist, was revoked, or is for an organization you are not a member of. Ask whoever shared it to check.</p><p><a href="/">Back to Volley</a></p>`,
      { status: 404, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
    );
  }
  return redirect(`${here}/view`);
}

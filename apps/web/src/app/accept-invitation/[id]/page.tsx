import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { AcceptInvitationButton } from "../../../components/accept-invitation-button";
import { ErrorPanel } from "../../../components/error-panel";
import { getAuth } from "@/server/auth/better-auth";

export const metadata: Metadata = { title: "Join an organization" };

/**
 * Where an invitation link lands. Signed out: sign in or create an account (with the invited
 * address) and come back here. Signed in: who invited you to which org as what, and a Join button.
 */
export default async function AcceptInvitationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const h = await headers();
  const auth = getAuth(h);
  const session = await auth.api.getSession({ headers: h });
  const back = encodeURIComponent(`/accept-invitation/${id}`);
  if (!session) {
    return (
      <div className="auth-page">
        <h1>Join an organization</h1>
        <p>
          You were invited to a Volley organization. <Link href={`/sign-in?next=${back}`}>Sign in</Link> or{" "}
          <Link href={`/sign-up?next=${back}`}>create an account</Link> with the email address the invitation was sent for, and you come back here to join.
        </p>
      </div>
    );
  }
  let invitation: Awaited<ReturnType<typeof auth.api.getInvitation>>;
  try {
    invitation = await auth.api.getInvitation({ headers: h, query: { id } });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return (
      <ErrorPanel title="This invitation cannot be used" message={`${message}.`}>
        <p className="muted">
          You are signed in as <strong>{session.user.email}</strong>. An invitation works once, for the address it names, until it expires or is cancelled — if
          it is for another address, sign out and sign in (or create an account) with that one; otherwise ask an admin of the organization for a new link.
        </p>
      </ErrorPanel>
    );
  }
  return (
    <div className="auth-page">
      <h1>Join {invitation.organizationName}</h1>
      <p>
        {invitation.inviterEmail} invited <strong>{invitation.email}</strong> to join <strong>{invitation.organizationName}</strong> as{" "}
        <strong>{invitation.role}</strong>.
      </p>
      <AcceptInvitationButton invitationId={invitation.id} orgName={invitation.organizationName} />
    </div>
  );
}

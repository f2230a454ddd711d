import type { Metadata } from "next";
import { headers } from "next/headers";
import { ErrorPanel } from "../../../components/error-panel";
import { MembersManager, type InvitationView, type MemberView } from "../../../components/members-manager";
import { getAuth } from "@/server/auth/better-auth";
import { pageSession } from "@/server/http/page-session";

export const metadata: Metadata = { title: "Members" };

export default async function MembersPage() {
  const auth = await pageSession();
  const { role, userId } = auth.actor;
  const canManage = role === "owner" || role === "admin";
  const h = await headers();
  const api = getAuth(h).api;
  let members: MemberView[];
  let invitations: InvitationView[] = [];
  try {
    // Through better-auth, so the page sees exactly what its organization endpoints allow.
    const listed = await api.listMembers({ headers: h, query: { organizationId: auth.orgId } });
    members = listed.members.map((m) => ({
      id: m.id,
      userId: m.userId,
      name: m.user.name,
      email: m.user.email,
      role: m.role,
      joinedAt: new Date(m.createdAt).toISOString(),
    }));
    if (canManage) {
      const pending = await api.listInvitations({ headers: h, query: { organizationId: auth.orgId } });
      invitations = pending
        .filter((i) => i.status === "pending" && new Date(i.expiresAt).getTime() > Date.now())
        .map((i) => ({ id: i.id, email: i.email, role: i.role, expiresAt: new Date(i.expiresAt).toISOString() }));
    }
  } catch (err) {
    return <ErrorPanel title="Cannot list the members" message={err instanceof Error ? err.message : String(err)} />;
  }
  members.sort((a, b) => a.joinedAt.localeCompare(b.joinedAt));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Settings → Members</h1>
          <p className="muted">
            Roles: <strong>viewer</strong> reads runs and plans; <strong>member</strong> also starts runs and saves plans; <strong>admin</strong> also manages
            members, API tokens, agents and targets; <strong>owner</strong> also makes owners.{" "}
            {canManage ? "" : `Your role is ${role}: ask an owner or admin to change members.`}
          </p>
        </div>
      </div>
      <MembersManager orgId={auth.orgId} currentUserId={userId} currentRole={role} members={members} invitations={invitations} />
    </>
  );
}

"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { fmtDateTime } from "../lib/format";
import { orgRequest } from "../lib/org-client";

const ROLES = ["owner", "admin", "member", "viewer"] as const;
type Role = (typeof ROLES)[number];

export interface MemberView {
  id: string;
  userId: string;
  name: string;
  email: string;
  role: string;
  joinedAt: string;
}

export interface InvitationView {
  id: string;
  email: string;
  role: string;
  expiresAt: string;
}

interface Props {
  orgId: string;
  currentUserId: string;
  currentRole: Role;
  members: MemberView[];
  invitations: InvitationView[];
}

const invitePath = (id: string) => `/accept-invitation/${id}`;

/**
 * The org's members (role changes, removal) and pending invitations (create, copy the link,
 * cancel). Changes go to better-auth's organization endpoints, which enforce who may do what;
 * the server page is then re-rendered with the new state.
 */
export function MembersManager({ orgId, currentUserId, currentRole, members, invitations }: Props) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ email: string; path: string } | null>(null);
  const canManage = currentRole === "owner" || currentRole === "admin";
  // Only an owner makes owners or changes one (better-auth refuses it to admins too).
  const assignable = ROLES.filter((r) => currentRole === "owner" || r !== "owner");

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await work();
      router.refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  function invite(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const email = String(form.get("email") ?? "").trim();
    const role = String(form.get("role") ?? "member");
    void act(async () => {
      const inv = await orgRequest<{ id: string; email: string }>("invite-member", { email, role, organizationId: orgId });
      setCreated({ email: inv.email, path: invitePath(inv.id) });
      formEl.reset();
    });
  }

  const changeRole = (m: MemberView, role: string) => act(() => orgRequest("update-member-role", { memberId: m.id, role, organizationId: orgId }));

  function remove(m: MemberView) {
    const self = m.userId === currentUserId;
    if (
      !window.confirm(
        self ? "Leave this organization? You lose access to its runs at once." : `Remove ${m.email}? They lose access to this organization at once.`,
      )
    )
      return;
    void act(() => orgRequest("remove-member", { memberIdOrEmail: m.id, organizationId: orgId }));
  }

  function cancel(inv: InvitationView) {
    void act(async () => {
      await orgRequest("cancel-invitation", { invitationId: inv.id });
      if (created?.path === invitePath(inv.id)) setCreated(null);
    });
  }

  return (
    <>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
      {canManage && (
        <section className="panel">
          <h2 className="panel-title">Invite someone</h2>
          <p className="muted">
            No email is sent (this installation has no mail server): copy the invitation link and send it yourself. Whoever opens it signs in or creates an
            account with the invited address, then joins. The link works once and expires after 7 days.
          </p>
          <form className="inline-form" onSubmit={invite}>
            <label>
              Email
              <input type="email" name="email" placeholder="colleague@example.com" required maxLength={254} />
            </label>
            <label>
              Role
              <select name="role" defaultValue="member">
                {assignable.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="button primary" disabled={busy}>
              Create invitation
            </button>
          </form>
          {created && (
            <div className="banner" role="status">
              <p>
                Invitation for <strong>{created.email}</strong> — send them this link:
              </p>
              <CopyLink path={created.path} testId="new-invitation-link" />
            </div>
          )}
        </section>
      )}
      <section className="panel">
        <h2 className="panel-title">Members</h2>
        <table className="table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Email</th>
              <th>Role</th>
              <th>Joined</th>
              {canManage && <th />}
            </tr>
          </thead>
          <tbody>
            {members.map((m) => {
              const locked = !canManage || (m.role === "owner" && currentRole !== "owner");
              return (
                <tr key={m.id}>
                  <td>
                    {m.name}
                    {m.userId === currentUserId && <span className="subtle"> (you)</span>}
                  </td>
                  <td>{m.email}</td>
                  <td>
                    {locked ? (
                      m.role
                    ) : (
                      <select aria-label={`Role of ${m.email}`} value={m.role} disabled={busy} onChange={(e) => void changeRole(m, e.target.value)}>
                        {assignable.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    )}
                  </td>
                  <td>{fmtDateTime(m.joinedAt)}</td>
                  {canManage && (
                    <td>
                      {!locked && (
                        <button type="button" className="button" disabled={busy} onClick={() => remove(m)}>
                          {m.userId === currentUserId ? "Leave" : "Remove"}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
      {canManage && (
        <section className="panel">
          <h2 className="panel-title">Pending invitations</h2>
          {invitations.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <table className="table">
              <thead>
                <tr>
                  <th>Email</th>
                  <th>Role</th>
                  <th>Expires</th>
                  <th>Link</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {invitations.map((inv) => (
                  <tr key={inv.id}>
                    <td>{inv.email}</td>
                    <td>{inv.role}</td>
                    <td>{fmtDateTime(inv.expiresAt)}</td>
                    <td>
                      <CopyLink path={invitePath(inv.id)} />
                    </td>
                    <td>
                      <button type="button" className="button" disabled={busy} onClick={() => cancel(inv)}>
                        Cancel
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </>
  );
}

/** A read-only field with the link and a Copy button (the clipboard needs a secure context; the field stays selectable). */
function CopyLink({ path, testId }: { path: string; testId?: string }) {
  const [copied, setCopied] = useState(false);
  // The origin the admin reached us on is the one to share; known only in the browser, after hydration.
  const [origin, setOrigin] = useState("");
  useEffect(() => setOrigin(window.location.origin), []);
  const full = `${origin}${path}`;
  return (
    <div className="invite-link">
      <input type="text" readOnly value={full} data-testid={testId} onFocus={(e) => e.currentTarget.select()} aria-label="Invitation link" />
      <button
        type="button"
        className="button"
        onClick={() =>
          void navigator.clipboard
            ?.writeText(full)
            .then(() => setCopied(true))
            .catch(() => setCopied(false))
        }
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}

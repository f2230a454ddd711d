import { fmtDateTime } from "../lib/format";

/** The last cell of a credential's row: when it was revoked, or the button that revokes it. */
export function RevokeCell({ revokedAt, onRevoke }: { revokedAt: string | null; onRevoke: () => void }) {
  return (
    <td>
      {revokedAt ? (
        <span className="subtle">revoked {fmtDateTime(revokedAt)}</span>
      ) : (
        <button type="button" className="button" onClick={onRevoke}>
          Revoke
        </button>
      )}
    </td>
  );
}

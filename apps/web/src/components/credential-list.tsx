import type { ReactNode } from "react";
import { fmtDateTime } from "../lib/format";

export interface Credential {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface Props<T extends Credential> {
  title: string;
  empty: string;
  tokens: T[];
  /** The one column that differs: an API token's scopes, a join token's pool. */
  extra: { header: string; cell: (t: T) => ReactNode };
  onRevoke: (t: T) => void;
}

/** A panel listing an org's secrets by prefix (API tokens, agent join tokens): use, and revoke. */
export function CredentialList<T extends Credential>({ title, empty, tokens, extra, onRevoke }: Props<T>) {
  return (
    <section className="panel">
      <h2 className="panel-title">{title}</h2>
      {tokens.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <table className="table" aria-label={title}>
          <thead>
            <tr>
              <th>Name</th>
              <th>Token</th>
              <th>{extra.header}</th>
              <th>Created</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id} className={t.revokedAt ? "subtle" : undefined}>
                <td>{t.name}</td>
                <td className="mono">{t.prefix}…</td>
                <td>{extra.cell(t)}</td>
                <td>{fmtDateTime(t.createdAt)}</td>
                <td>{t.lastUsedAt ? fmtDateTime(t.lastUsedAt) : "never"}</td>
                <td>
                  {t.revokedAt ? (
                    <span className="subtle">revoked {fmtDateTime(t.revokedAt)}</span>
                  ) : (
                    <button type="button" className="button" onClick={() => onRevoke(t)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

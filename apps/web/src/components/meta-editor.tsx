"use client";

import { useState } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

/** Tags (comma or space separated) and notes of a run or plan, saved with PATCH `endpoint`. */
export function MetaEditor({
  endpoint,
  initialTags,
  initialNotes,
  canEdit,
  what,
}: {
  endpoint: string;
  initialTags: string[];
  initialNotes: string;
  canEdit: boolean;
  what: string;
}) {
  const [tags, setTags] = useState(initialTags);
  const [notes, setNotes] = useState(initialNotes);
  const [tagText, setTagText] = useState(initialTags.join(", "));
  const [noteText, setNoteText] = useState(initialNotes);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const dirty = tagText !== tags.join(", ") || noteText !== notes;

  async function save() {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const next = tagText.split(/[,\s]+/).filter(Boolean);
      const out = await apiFetch<{ tags: string[]; notes: string }>(endpoint, { method: "PATCH", body: JSON.stringify({ tags: next, notes: noteText }) });
      setTags(out.tags);
      setNotes(out.notes);
      setTagText(out.tags.join(", "));
      setNoteText(out.notes);
      setSaved(true);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="meta-editor" data-testid="meta-editor">
      <div className="meta-tags">
        {tags.length === 0 ? (
          <span className="subtle small">No tags</span>
        ) : (
          tags.map((t) => (
            <span key={t} className="tag-chip">
              {t}
            </span>
          ))
        )}
      </div>
      {canEdit ? (
        <>
          <label className="meta-field">
            <span className="small muted">Tags (comma separated)</span>
            <input
              type="text"
              value={tagText}
              onChange={(e) => setTagText(e.target.value)}
              placeholder="release-2.3, env:staging"
              aria-label={`Tags of this ${what}`}
            />
          </label>
          <label className="meta-field">
            <span className="small muted">Notes</span>
            <textarea
              value={noteText}
              onChange={(e) => setNoteText(e.target.value)}
              rows={3}
              placeholder={`What is special about this ${what}?`}
              aria-label={`Notes on this ${what}`}
            />
          </label>
          <div className="meta-actions">
            <button type="button" className="button" onClick={save} disabled={busy || !dirty}>
              Save tags and notes
            </button>
            {saved && !dirty && <span className="small good">Saved</span>}
          </div>
        </>
      ) : (
        notes && <p className="meta-notes small">{notes}</p>
      )}
      {error && (
        <p className="bad small" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

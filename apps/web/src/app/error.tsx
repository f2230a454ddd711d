"use client";

import { useEffect } from "react";

/**
 * Words for the digests server pages give outages (server/http/page-errors.ts PAGE_ERROR_DIGESTS; a
 * client component cannot import that server module). Next hides error messages from the
 * browser; the digest is all that arrives.
 */
const OUTAGES: Record<string, { title: string; message: string }> = {
  "volley:database-unreachable": {
    title: "The database is unreachable",
    message:
      "Volley cannot reach its PostgreSQL database, so this page cannot load. Check that PostgreSQL is running and that DATABASE_URL points at it (the server log names the address); the page loads again as soon as the database answers.",
  },
  "volley:redis-unreachable": {
    title: "Redis is unreachable",
    message:
      "Volley cannot reach Redis, so this page cannot load. Check that Redis is running and that REDIS_URL points at it; the page loads again as soon as Redis answers.",
  },
};

export default function ErrorBoundary({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const outage = error.digest ? OUTAGES[error.digest] : undefined;
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">{outage ? outage.title : "This page failed to load"}</h2>
      <p className="panel-message">
        {outage ? outage.message : `Something went wrong on our side${error.digest ? ` (error ${error.digest}; the server log has the details)` : ""}.`}
      </p>
      <button type="button" className="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}

"use client";

import { useEffect } from "react";

export default function ErrorBoundary({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">This page failed to load</h2>
      <p className="panel-message">
        Something went wrong on our side{error.digest ? ` (error ${error.digest}; the server log has the details)` : ""}.
      </p>
      <button type="button" className="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}

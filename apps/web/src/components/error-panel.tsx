import type { ReactNode } from "react";

/** A problem explained in words: what failed, why, and (children) what to do about it. */
export function ErrorPanel({ title, message, children }: { title: string; message: string; children?: ReactNode }) {
  return (
    <div className="panel panel-error" role="alert">
      <h2 className="panel-title">{title}</h2>
      <p className="panel-message">{message}</p>
      {children}
    </div>
  );
}

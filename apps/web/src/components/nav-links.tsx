"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useState } from "react";

const LINKS = [
  { href: "/", label: "Runs", active: (p: string) => p === "/" || (p.startsWith("/runs/") && p !== "/runs/new") },
  { href: "/runs/new", label: "New run", active: (p: string) => p === "/runs/new" },
  { href: "/plans", label: "Plans", active: (p: string) => p.startsWith("/plans") },
  { href: "/compare", label: "Compare", active: (p: string) => p.startsWith("/compare") },
  { href: "/agents", label: "Agents", active: (p: string) => p.startsWith("/agents") },
  { href: "/settings/tokens", label: "Settings", active: (p: string) => p.startsWith("/settings") },
  { href: "/api-docs", label: "API", active: (p: string) => p === "/api-docs" },
] as const;

const AUTH_PAGES = new Set(["/sign-in", "/sign-up"]);

async function signOut() {
  // better-auth clears the session cookie; a full load then lands on /sign-in through the page guard.
  await fetch("/api/auth/sign-out", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).catch(() => {});
  window.location.assign("/sign-in");
}

/**
 * The main nav. Below 860 px (phones, narrow windows) its links fold behind a Menu button that
 * opens them as a column under the bar: in one row they made every page wider than the screen.
 */
export function NavLinks() {
  const pathname = usePathname() ?? "/";
  const [open, setOpen] = useState(false);
  // A new page closes the menu; so does Escape.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the pathname is the trigger, not an input.
  useEffect(() => setOpen(false), [pathname]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);
  if (AUTH_PAGES.has(pathname)) return null;
  return (
    <>
      <button type="button" className="nav-toggle" aria-expanded={open} aria-controls="main-nav" onClick={() => setOpen((o) => !o)}>
        <span className="nav-toggle-bars" aria-hidden="true" />
        Menu
      </button>
      <nav id="main-nav" className={open ? "nav open" : "nav"} aria-label="Main">
        {LINKS.map((l) => (
          <Link
            key={l.href}
            href={l.href}
            className={l.active(pathname) ? "nav-link active" : "nav-link"}
            aria-current={l.active(pathname) ? "page" : undefined}
            onClick={() => setOpen(false)}
          >
            {l.label}
          </Link>
        ))}
        <button type="button" className="nav-link nav-signout" onClick={() => void signOut()}>
          Sign out
        </button>
      </nav>
    </>
  );
}

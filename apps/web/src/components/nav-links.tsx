"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/", label: "Runs", active: (p: string) => p === "/" || (p.startsWith("/runs/") && p !== "/runs/new") },
  { href: "/runs/new", label: "New run", active: (p: string) => p === "/runs/new" },
  { href: "/api-docs", label: "API", active: (p: string) => p === "/api-docs" },
] as const;

export function NavLinks() {
  const pathname = usePathname() ?? "/";
  return (
    <nav className="nav" aria-label="Main">
      {LINKS.map((l) => (
        <Link key={l.href} href={l.href} className={l.active(pathname) ? "nav-link active" : "nav-link"} aria-current={l.active(pathname) ? "page" : undefined}>
          {l.label}
        </Link>
      ))}
    </nav>
  );
}

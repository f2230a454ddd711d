"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const TABS = [
  { href: "/settings/tokens", label: "API tokens" },
  { href: "/settings/members", label: "Members" },
  { href: "/settings/webhooks", label: "Webhooks" },
  { href: "/settings/metrics-export", label: "Metrics export" },
] as const;

/** The settings pages' sub-navigation, shown above each of them by settings/layout.tsx. */
export function SettingsTabs() {
  const pathname = usePathname() ?? "";
  return (
    <nav className="settings-tabs" aria-label="Settings">
      {TABS.map((t) => {
        const active = pathname.startsWith(t.href);
        return (
          <Link key={t.href} href={t.href} className={active ? "settings-tab active" : "settings-tab"} aria-current={active ? "page" : undefined}>
            {t.label}
          </Link>
        );
      })}
    </nav>
  );
}

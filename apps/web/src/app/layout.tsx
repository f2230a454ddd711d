import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { NavLinks } from "../components/nav-links";
import "./globals.css";
import "./dashboard.css";
import "./compare.css";

export const metadata: Metadata = {
  title: { default: "Volley", template: "%s · Volley" },
  description: "Load testing for real-time servers",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <div className="topbar-inner">
            <Link href="/" className="brand" aria-label="Volley home">
              <span className="brand-mark" aria-hidden="true" />
              Volley
            </Link>
            <NavLinks />
          </div>
        </header>
        <main className="page">{children}</main>
      </body>
    </html>
  );
}

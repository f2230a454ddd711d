import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { AuthForm } from "../../components/auth-form";
import { PlainHttpNotice } from "../../components/plain-http-notice";
import { hasUsers, pageUser } from "@/server/http/page-session";
import { safeNextPath } from "../../lib/next-path";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const next = safeNextPath((await searchParams).next);
  if (await pageUser()) redirect(next);
  if (!(await hasUsers())) redirect("/sign-up");
  return (
    <div className="auth-page">
      <h1>Sign in</h1>
      <PlainHttpNotice />
      <AuthForm mode="sign-in" next={next} />
      <p className="muted">
        No account yet? <Link href={next === "/" ? "/sign-up" : `/sign-up?next=${encodeURIComponent(next)}`}>Create one</Link>.
      </p>
    </div>
  );
}

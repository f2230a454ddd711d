import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { AuthForm } from "../../components/auth-form";
import { PlainHttpNotice } from "../../components/plain-http-notice";
import { hasUsers, pageUser } from "@/server/http/page-session";
import { safeNextPath } from "../../lib/next-path";

export const metadata: Metadata = { title: "Create account" };

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const next = safeNextPath((await searchParams).next);
  if (await pageUser()) redirect(next);
  const fresh = !(await hasUsers());
  return (
    <div className="auth-page">
      <h1>Create account</h1>
      <PlainHttpNotice />
      {fresh ? (
        <p className="muted">
          This is a fresh install: the first account becomes the owner of this Volley installation&apos;s organization and sees every existing run.
        </p>
      ) : (
        <p className="muted">
          You get an organization of your own. Already have an account?{" "}
          <Link href={next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`}>Sign in</Link>.
        </p>
      )}
      <AuthForm mode="sign-up" next={next} />
    </div>
  );
}

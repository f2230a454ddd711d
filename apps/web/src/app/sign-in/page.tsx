import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { redirect } from "next/navigation";
import { AuthForm } from "../../components/auth-form";
import { sessionUser } from "../../server/auth";
import { hasUsers } from "../../server/page-session";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage() {
  if (await sessionUser({ headers: await headers() })) redirect("/");
  if (!(await hasUsers())) redirect("/sign-up");
  return (
    <div className="auth-page">
      <h1>Sign in</h1>
      <AuthForm mode="sign-in" />
      <p className="muted">
        No account yet? <Link href="/sign-up">Create one</Link>.
      </p>
    </div>
  );
}

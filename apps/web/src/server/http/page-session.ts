import { schema } from "@volley/db";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { sessionUser, type AuthContext } from "../auth/auth";
import { forPage } from "./page-errors";
import { getDb } from "./services";

/** Whether anyone has signed up yet: a fresh install sends its first visitor to /sign-up. */
export async function hasUsers(): Promise<boolean> {
  const [row] = await forPage(() => getDb().select({ id: schema.users.id }).from(schema.users).limit(1));
  return row !== undefined;
}

/** The session's member for pages that serve visitors too (sign-in, sign-up); an outage is a readable page error. */
export async function pageUser(): Promise<AuthContext | null> {
  const h = await headers();
  return forPage(() => sessionUser({ headers: h }));
}

/**
 * The signed-in member for a server page. Without a session it redirects: to /sign-up on a fresh
 * install (no users yet, the first account becomes the owner), else to /sign-in.
 */
export async function pageSession(): Promise<AuthContext & { actor: { kind: "user" } }> {
  const auth = await pageUser();
  if (auth?.actor.kind === "user") return auth as AuthContext & { actor: { kind: "user" } };
  redirect((await hasUsers()) ? "/sign-in" : "/sign-up");
}

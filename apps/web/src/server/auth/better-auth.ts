import { newId, schema, DEFAULT_ORG_ID, countOwnedOrgs, listMemberships, type IdPrefix } from "@volley/db";
import { betterAuth } from "better-auth";
import { APIError } from "better-auth/api";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { createAccessControl } from "better-auth/plugins/access";
import { organization } from "better-auth/plugins/organization";
import { adminAc, defaultStatements, memberAc, ownerAc } from "better-auth/plugins/organization/access";
import { eq, sql } from "drizzle-orm";
import { authSecret, databaseUrl, maxOrgsPerUser, publicUrl } from "@/env";
import { getDb } from "../http/services";
import { trustedOrigins } from "./trusted-origins";
import { hashedSessionTokens } from "./hashed-session-tokens";
import { isHttpsRequest } from "../http/request-origin";
import { MIN_PASSWORD_LENGTH } from "@/lib/password-rules";

/**
 * better-auth: email + password accounts, sessions (cookie), and organizations with members,
 * roles and invitations (organization plugin). Its organization model is our `orgs` table, so every
 * existing row (owned by `org_default`) keeps its owner. The first user of a fresh install becomes
 * owner of the default org; later users who sign up get an org of their own and can be invited to
 * others.
 */

const ac = createAccessControl(defaultStatements);
/** Viewers read everything in the org and change nothing (runs, plans, members). */
const viewerAc = ac.newRole({ organization: [], member: [], invitation: [], team: [], ac: ["read"] });
export const ORG_ROLES = { owner: ownerAc, admin: adminAc, member: memberAc, viewer: viewerAc };

const ID_PREFIXES: Record<string, IdPrefix> = {
  user: "usr",
  session: "ses",
  account: "acc",
  verification: "ver",
  organization: "org",
  member: "mem",
  invitation: "inv",
};

/**
 * Each organization carries its own hosted quotas and workers' share, so one account may own at
 * most VOLLEY_MAX_ORGS_PER_USER of them (the one it got at sign-up included). Counted as owner, not
 * as member: invitations to other people's orgs never use up the allowance.
 */
async function assertMayCreateOrg(user: { id: string }, owned?: number): Promise<void> {
  const limit = maxOrgsPerUser();
  const count = owned ?? (await countOwnedOrgs(getDb(), user.id));
  if (count >= limit) {
    const had = owned === undefined ? count : count - 1;
    throw new APIError("FORBIDDEN", {
      code: "ORGANIZATION_LIMIT_REACHED",
      message: `you already own ${had} organization${had === 1 ? "" : "s"}, the most one account may own (VOLLEY_MAX_ORGS_PER_USER=${limit}); delete one you no longer use, or ask the operator to raise the limit`,
    });
  }
}

/**
 * The check before creation cannot see creations running at the same moment (eight parallel
 * requests made four orgs past a limit of three), so each creation counts again once its own org
 * exists and takes it back when the count is over. The recounts run one at a time per account
 * (an advisory lock): unserialised, eight recounts each saw nine orgs and all eight were taken back.
 * Serialised, each recount sees every org committed before it and the deletions before it, so the
 * first ones over the limit go and exactly the limit stays.
 */
async function undoOrgOverLimit(user: { id: string }, orgId: string): Promise<void> {
  const owned = await getDb().transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(7340213, hashtext(${user.id}))`);
    const count = await countOwnedOrgs(tx, user.id);
    if (count > maxOrgsPerUser()) await tx.delete(schema.orgs).where(eq(schema.orgs.id, orgId));
    return count;
  });
  if (owned > maxOrgsPerUser()) await assertMayCreateOrg(user, owned);
}

/** Makes the user a member somewhere: owner of the default org if it has no members yet, else owner of a new org. */
async function giveFirstOrg(user: { id: string; name: string; email: string }): Promise<void> {
  const db = getDb();
  await db.transaction(async (tx) => {
    // Serialises concurrent first sign-ups so exactly one becomes the default org's owner.
    await tx.execute(sql`select pg_advisory_xact_lock(7340212)`);
    const [claimed] = await tx.select({ id: schema.members.id }).from(schema.members).where(sql`${schema.members.organizationId} = ${DEFAULT_ORG_ID}`).limit(1);
    let orgId = DEFAULT_ORG_ID;
    if (claimed) {
      orgId = newId("org");
      const label = user.name.trim() || user.email.split("@")[0] || "My";
      await tx.insert(schema.orgs).values({ id: orgId, name: `${label}'s org`, slug: orgId });
    }
    await tx.insert(schema.members).values({ id: newId("mem"), organizationId: orgId, userId: user.id, role: "owner" });
  });
}

function createAuth(secureCookies: boolean) {
  const secret = authSecret();
  const baseURL = publicUrl() ?? undefined;
  return betterAuth({
    secret,
    baseURL,
    basePath: "/api/auth",
    // A function, so interfaces that come up after start (a new LAN address) are trusted too.
    trustedOrigins: () => trustedOrigins(),
    // Session tokens are stored as their SHA-256 only (hashed-session-tokens.ts).
    database: hashedSessionTokens(
      drizzleAdapter(getDb(), {
        provider: "pg",
        schema: {
          user: schema.users,
          session: schema.sessions,
          account: schema.accounts,
          verification: schema.verifications,
          orgs: schema.orgs,
          member: schema.members,
          invitation: schema.invitations,
        },
      }),
    ),
    // Both take a session's token as the client got it from /list-sessions, which with tokens hashed
    // at rest is the hash: revoking by it can never match. The UI offers neither; signing out
    // (/sign-out) and ending all of a user's sessions (/revoke-sessions) work as before.
    disabledPaths: ["/revoke-session", "/revoke-other-sessions"],
    emailAndPassword: { enabled: true, minPasswordLength: MIN_PASSWORD_LENGTH, autoSignIn: true },
    // Errors that are not better-auth's own answers (PostgreSQL down, a bug) reach the auth route,
    // which answers them in the API's error shape (503 unavailable naming the database), instead
    // of better-auth's empty 500. Its own errors (wrong password, 4xx) are still answered by it.
    onAPIError: { throw: true },
    // Sign-in is rate limited by web's own Redis-backed limiter (rate-limit.ts), shared by every replica.
    rateLimit: { enabled: false },
    advanced: {
      // Secure (and __Secure-) cookies only where the browser came over https: a browser drops them
      // on plain http from any name but localhost, and the sign-in that set one silently ended in 401.
      useSecureCookies: secureCookies,
      // Explicit: better-auth turns origin checks off by itself when NODE_ENV=test, which would let
      // tests pass a CSRF hole (or a sign-up that real browsers are refused) unseen.
      disableOriginCheck: false,
      disableCSRFCheck: false,
      database: { generateId: ({ model }) => newId(ID_PREFIXES[model] ?? "usr") },
    },
    databaseHooks: {
      user: { create: { after: async (user) => giveFirstOrg(user) } },
      session: {
        create: {
          before: async (session) => {
            const [first] = await listMemberships(getDb(), session.userId);
            return { data: { ...session, activeOrganizationId: first?.orgId ?? null } };
          },
        },
      },
    },
    plugins: [
      organization({
        ac,
        roles: ORG_ROLES,
        creatorRole: "owner",
        invitationExpiresIn: 7 * 24 * 3600,
        // No mail server, so no address is ever verified: the invitation link is the proof instead.
        // Its id is newId() (80 random bits), and only the invited address can accept it. Without
        // this, better-auth (seeing our own generateId) would demand a verified email and no
        // invitation could ever be accepted.
        requireEmailVerificationOnInvitation: false,
        organizationHooks: {
          beforeCreateOrganization: async ({ user }) => assertMayCreateOrg(user),
          afterCreateOrganization: async ({ user, organization }) => undoOrgOverLimit(user, organization.id),
        },
        schema: { organization: { modelName: "orgs" } },
      }),
    ],
  });
}

export type Auth = ReturnType<typeof createAuth>;

const g = globalThis as typeof globalThis & { __volleyAuth?: { key: string; auth: { secure?: Auth; plain?: Auth } } };

/**
 * One better-auth instance per database (tests switch DATABASE_URL) and cookie kind, created on
 * first use: the request's headers say whether it came over https (request-origin.ts), which picks
 * Secure cookies or plain ones.
 */
export function getAuth(headers: Pick<Headers, "get">): Auth {
  const secure = isHttpsRequest(headers);
  const key = `${databaseUrl()}|${publicUrl() ?? ""}|${authSecret()}`;
  const cache = g.__volleyAuth?.key === key ? g.__volleyAuth : (g.__volleyAuth = { key, auth: {} });
  return (cache.auth[secure ? "secure" : "plain"] ??= createAuth(secure));
}

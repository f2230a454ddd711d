import { createHash, timingSafeEqual } from "node:crypto";
import { agentHelloSchema, agentVersionRefusal, describeIssues, fieldIssues, type AgentHello } from "@volley/contracts";
import { DEFAULT_ORG_ID, isJoinTokenSecret, verifyAgentToken, type AgentEnrollment, type Db } from "@volley/db";

/** `permanent`: asking again cannot succeed (the token or the agent's version), so a new agent may stop instead of retrying. */
export type Admission = { ok: true; hello: AgentHello; enrollment: Required<AgentEnrollment> } | { ok: false; error: string; log: string; permanent?: boolean };

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Decides whether a handshake's `auth` admits an agent. Two kinds of token:
 * - a join token (`vat_…`, created per org in the web UI): the agent joins that token's org and
 *   pool, and is dropped once the token is revoked;
 * - the hub's shared AGENT_TOKEN, the self-hosted bootstrap: the default org, the pool the agent
 *   names. Unset, only join tokens admit.
 * The token is checked before the hello's shape, so strangers learn nothing about the schema.
 */
export function createAdmission(db: Db, bootstrapToken: string | null | undefined) {
  const expected = bootstrapToken ? digest(bootstrapToken) : null;
  const invalid = (why: string): Admission => ({
    ok: false,
    error: `invalid agent token: this hub knows no such token (mistyped, or created on another Volley install) — ${expected ? "use a join token (vat_…) from this install's Agents → Add agent, or the hub's AGENT_TOKEN" : "use a join token (vat_…) from this install's Agents → Add agent (this hub has no shared AGENT_TOKEN)"}`,
    log: why,
    permanent: true,
  });

  return async function admit(auth: Record<string, unknown>): Promise<Admission> {
    const token = typeof auth.token === "string" ? auth.token : "";
    let enrollment: Required<AgentEnrollment>;
    let pool: string | null = null;
    if (isJoinTokenSecret(token)) {
      const check = await verifyAgentToken(db, token);
      if (check.status === "unknown") return invalid("unknown join token");
      if (check.status === "revoked") {
        return {
          ok: false,
          error: `agent token revoked: join token "${check.token.name}" (${check.token.prefix}…) was revoked; ask an admin of your Volley organization for a new join token and set it as AGENT_TOKEN`,
          log: `revoked join token ${check.token.id}`,
          permanent: true,
        };
      }
      enrollment = { orgId: check.token.orgId, tokenId: check.token.id };
      pool = check.token.pool;
    } else if (expected && token && timingSafeEqual(digest(token), expected)) {
      enrollment = { orgId: DEFAULT_ORG_ID, tokenId: null };
    } else {
      return invalid(token ? "token matches neither a join token nor AGENT_TOKEN" : "no token");
    }
    const hello = agentHelloSchema.safeParse(auth);
    if (!hello.success) {
      const error = `invalid agent hello: ${describeIssues(fieldIssues(hello.error))}`;
      return { ok: false, error, log: error, permanent: true };
    }
    const old = agentVersionRefusal(hello.data.version);
    if (old) return { ok: false, error: old, log: `agent version ${hello.data.version}`, permanent: true };
    // A join token decides the pool: whoever holds it was given capacity for that pool, not another.
    return { ok: true, hello: pool ? { ...hello.data, pool } : hello.data, enrollment };
  };
}

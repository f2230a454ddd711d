import { inject } from "vitest";
import "@volley/devstack/vitest-context";
import { createApiToken, createDb, createTestDatabase, DEFAULT_ORG_ID } from "@volley/db";
import { freePort, leaseRedisDb, startApp, type AppName, type ManagedProcess } from "@volley/devstack";

export interface Stack {
  webUrl: string;
  hubPort: number;
  databaseUrl: string;
  redisUrl: string;
  /** A real API token (read + run) of the default org, created in the stack's database; api() sends it. */
  token: string;
  processes: Record<Exclude<AppName, "targets">, ManagedProcess>;
  /** Every agent process (processes.agent is the first), each with its own name: e2e-agent, e2e-agent-2, … */
  agents: ManagedProcess[];
  output: string[];
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Agent processes (default one). */
  agents?: number;
  /**
   * Where the agents reach web from, e.g. a bridge address network-namespace hosts reach: they then
   * dial the hub through web's relay (http://<it>:<web port>/hub), as the Agents page prints, while
   * the hub keeps its default loopback address. Unset: the agents dial the hub at 127.0.0.1.
   */
  agentWebHost?: string;
  /** A command prefix per agent (startApp's `prefix`), e.g. to run agent i inside network namespace i. */
  agentPrefix?: (index: number) => string[];
}

/**
 * hub, `agents` agent processes (default one) and web as real processes on free ports, with their
 * own database and a Redis logical database leased to this stack (emptied: no queue state left by an
 * earlier file's stack).
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const db = await createTestDatabase(inject("databaseServerUrl"));
  const lease = await leaseRedisDb(inject("redisUrl"));
  const redisUrl = lease.url;
  const h = createDb(db.url, 1);
  const { secret: token } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "e2e", scopes: ["read", "run"] }).finally(() => h.close());
  const [hubPort, webPort] = [await freePort(), await freePort()];
  const output: string[] = [];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    HUB_PORT: String(hubPort),
    HUB_URL: `http://127.0.0.1:${hubPort}`,
    WEB_PORT: String(webPort),
    AGENT_NAME: "e2e-agent",
    AGENT_TOKEN: "e2e-bootstrap-agent-token",
    // web refuses to start without one (nothing derives it).
    AUTH_SECRET: "e2e-stack-auth-secret-0123456789abcdef",
    LOG_LEVEL: "info",
  };
  const log = (name: string) => (line: string) => output.push(`[${name}] ${line}`);
  const hub = startApp("hub", env, log("hub"));
  const web = startApp("web", env, log("web"));
  const agents: ManagedProcess[] = [];
  const stopAll = async () => {
    await Promise.all([web.stop(), ...agents.map((a) => a.stop())]);
    await hub.stop();
    await db.drop().catch(() => {});
    await lease.release();
  };
  try {
    await hub.waitFor(/hub listening/i, 90_000);
    const webReady = web.waitFor(/ready|Local:/i, 90_000);
    // Through web's relay, the agents need web up first.
    if (opts.agentWebHost) await webReady;
    const agentEnv = opts.agentWebHost ? { ...env, HUB_URL: `http://${opts.agentWebHost}:${webPort}/hub` } : env;
    for (let i = 0; i < (opts.agents ?? 1); i++) {
      const name = i === 0 ? "e2e-agent" : `e2e-agent-${i + 1}`;
      agents.push(startApp("agent", { ...agentEnv, AGENT_NAME: name }, log(i === 0 ? "agent" : name), { prefix: opts.agentPrefix?.(i) }));
    }
    await Promise.all([...agents.map((a) => a.waitFor(/connected to/i, 60_000)), webReady]);
  } catch (err) {
    // The caller gets no Stack to stop: leave no process behind.
    await stopAll();
    throw err;
  }
  return {
    // Web binds every interface, as on a default start; browsers reach it at localhost.
    webUrl: `http://localhost:${webPort}`,
    hubPort,
    databaseUrl: db.url,
    redisUrl,
    token,
    processes: { hub, agent: agents[0]!, web },
    agents,
    output,
    stop: stopAll,
  };
}

/** A JSON API call with the stack's API token (pass `token: null` to send no credentials). */
export async function api<T = unknown>(
  stack: Stack,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = stack.token,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${stack.webUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export async function waitForFinal<T extends { status: string }>(stack: Stack, runId: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api<T>(stack, "GET", `/api/v1/runs/${runId}`);
    if (["passed", "failed", "errored", "aborted", "degraded", "inconclusive"].includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${body.status} after ${timeoutMs} ms\n${stack.output.slice(-40).join("\n")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

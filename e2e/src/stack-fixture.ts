import { inject } from "vitest";
import "@volley/devstack/vitest-context";
import { createApiToken, createDb, createTestDatabase, DEFAULT_ORG_ID } from "@volley/db";
import { freePort, startApp, type AppName, type ManagedProcess } from "@volley/devstack";

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

/** hub, `agents` agent processes (default one) and web as real processes on free ports, with their own database and Redis db. */
export async function startStack(redisDb: number, opts: { agents?: number } = {}): Promise<Stack> {
  const db = await createTestDatabase(inject("databaseServerUrl"));
  const redisUrl = `${inject("redisUrl")}/${redisDb}`;
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
    WEB_HOST: "127.0.0.1",
    AGENT_NAME: "e2e-agent",
    AGENT_TOKEN: "e2e-bootstrap-agent-token",
    LOG_LEVEL: "info",
  };
  const log = (name: string) => (line: string) => output.push(`[${name}] ${line}`);
  const hub = startApp("hub", env, log("hub"));
  const web = startApp("web", env, log("web"));
  await hub.waitFor(/hub listening/i, 90_000);
  const agents = Array.from({ length: opts.agents ?? 1 }, (_, i) => {
    const name = i === 0 ? "e2e-agent" : `e2e-agent-${i + 1}`;
    return startApp("agent", { ...env, AGENT_NAME: name }, log(i === 0 ? "agent" : name));
  });
  await Promise.all([...agents.map((a) => a.waitFor(/connected to/i, 60_000)), web.waitFor(/ready|Local:/i, 90_000)]);
  return {
    webUrl: `http://127.0.0.1:${webPort}`,
    hubPort,
    databaseUrl: db.url,
    redisUrl,
    token,
    processes: { hub, agent: agents[0]!, web },
    agents,
    output,
    async stop() {
      await Promise.all([web.stop(), ...agents.map((a) => a.stop())]);
      await hub.stop();
      await db.drop().catch(() => {});
    },
  };
}

/** A JSON API call with the stack's API token (pass `token: null` to send no credentials). */
export async function api<T = unknown>(stack: Stack, method: string, path: string, body?: unknown, token: string | null = stack.token): Promise<{ status: number; body: T }> {
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
    if (["passed", "failed", "errored", "aborted", "degraded"].includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${body.status} after ${timeoutMs} ms\n${stack.output.slice(-40).join("\n")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

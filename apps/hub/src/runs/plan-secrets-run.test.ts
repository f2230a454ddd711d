import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { planSchema, SECRET_MARKER, type ShardJob } from "@volley/contracts";
import { insertRun, listShards, openPlan, parseSecretKeys } from "@volley/db";
import { enqueue, runJob } from "@volley/queue";
import { startApp, type ManagedProcess } from "@volley/devstack";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { useHubHarness } from "../test-support/use-hub-harness";

// A plan's target credentials are stored sealed and redacted (db plan-secrets-box): the run row, the
// shard rows and the shard's BullMQ job hold none of them, and the agent is still handed the real plan.

const keys = parseSecretKeys(randomBytes(32).toString("base64"));
const h = useHubHarness({ secretsKeys: keys, armTimeoutMs: 20_000 });
const processes: ManagedProcess[] = [];
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop(2000)));
});

/**
 * A target that records what reaches it: the login request's body, and each WebSocket upgrade's
 * URL and Authorization header (it completes the handshake and then only reads, so no message is
 * answered; the plans below turn the sanity checks off).
 */
async function recordingTarget() {
  const seen = { logins: [] as string[], upgrades: [] as { url: string; authorization: string | undefined }[] };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      if (req.url === "/login") seen.logins.push(body);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex) => {
    upgraded.add(socket);
    seen.upgrades.push({ url: req.url ?? "", authorization: req.headers.authorization });
    const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.on("data", () => {});
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const close = () => {
    server.closeAllConnections(); // the login's kept-alive connection
    for (const socket of upgraded) socket.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return { seen, port: (server.address() as AddressInfo).port, close };
}

const SECRETS = ["Bearer hdr-7f3a9c", "pw-login-51d2", "qtok-88e1"];
const plan = planSchema.parse({
  name: "sealed credentials",
  target: { url: "ws://127.0.0.1:9/echo?token=qtok-88e1", protocol: "ws", headers: { Authorization: "Bearer hdr-7f3a9c" } },
  connections: { count: 2, rate: 100 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "2s" },
  flow: { setup: [{ request: { method: "POST", url: "http://127.0.0.1:9/login", json: { user: "ann", password: "pw-login-51d2" } } }] },
  sanity: false,
  agents: { pool: "sealed" },
});

describe("a run of a plan with credentials", () => {
  it("stores them sealed in the run, its shards and the shard job, and hands the agent the real plan", async () => {
    const agent = await h.connect({ name: "sealed-agent", pool: "sealed" });
    const run = await insertRun(h.db.db, { plan, secretsKeys: keys });
    await enqueue(h.runs, runJob, { runId: run.id }, { jobId: run.id });

    const job = (await agent.until((r) => r.assign.find((j) => j.runId === run.id), 10_000, "shard.assign")) as ShardJob;
    expect(job.plan.target.headers?.Authorization).toBe("Bearer hdr-7f3a9c");
    expect(job.plan.target.url).toBe("ws://127.0.0.1:9/echo?token=qtok-88e1");
    expect(JSON.stringify(job.plan.flow?.setup)).toContain(`"password":"pw-login-51d2"`);
    expect(job).not.toHaveProperty("secrets");

    // At rest: the run row and the shard rows have the redaction, the sealed column the values.
    const rows = JSON.stringify([(await h.db.db.execute(`select plan, secrets from runs where id = '${run.id}'`)).rows, await listShards(h.db.db, run.id)]);
    for (const s of SECRETS) expect(rows).not.toContain(s);
    expect(rows).toContain(SECRET_MARKER);
    const [shard] = await listShards(h.db.db, run.id);
    expect(shard!.secrets).toMatch(/^vsec1:/);
    expect(openPlan({ document: shard!.plan, source: null, secrets: shard!.secrets }, keys).plan.target.headers?.Authorization).toBe("Bearer hdr-7f3a9c");

    // In Redis: every string of every key (the shard job's data included) is free of them.
    const dump: string[] = [];
    for (const key of await h.redis.keys("*")) {
      const type = await h.redis.type(key);
      if (type === "hash") dump.push(JSON.stringify(await h.redis.hgetall(key)));
      else if (type === "string") dump.push((await h.redis.get(key)) ?? "");
      else if (type === "list") dump.push(JSON.stringify(await h.redis.lrange(key, 0, -1)));
    }
    expect(dump.join("\n")).toContain(job.shardId);
    for (const s of SECRETS) expect(dump.join("\n")).not.toContain(s);

    await agent.nextStart();
    await agent.end({ runId: run.id, shardId: job.shardId, status: "completed", frames: 0 });
    expect((await h.waitForFinal(run.id)).status).not.toBe("errored");
  });

  it("a real agent reaches the target with the real header, URL token and login body", async () => {
    const target = await recordingTarget();
    try {
      const output: string[] = [];
      const agent = startApp(
        "agent",
        { ...process.env, HUB_URL: h.hubUrl, AGENT_TOKEN: TEST_AGENT_TOKEN, AGENT_NAME: "real-sealed", AGENT_POOL: "sealed-real", LOG_LEVEL: "info" },
        (l) => output.push(l),
      );
      processes.push(agent);
      await agent.waitFor(/connected to/, 60_000);
      const real = planSchema.parse({
        ...plan,
        target: { ...plan.target, url: `ws://127.0.0.1:${target.port}/echo?token=qtok-88e1` },
        connections: { count: 1, rate: 10 },
        flow: {
          setup: [{ request: { method: "POST", url: `http://127.0.0.1:${target.port}/login`, json: { user: "ann", password: "pw-login-51d2" } } }],
          messages: [{ text: "hello", reply: false }],
        },
        agents: { pool: "sealed-real" },
      });
      const run = await insertRun(h.db.db, { plan: real, secretsKeys: keys });
      expect(JSON.stringify(run.plan)).not.toContain("pw-login-51d2");
      await enqueue(h.runs, runJob, { runId: run.id }, { jobId: run.id });
      const done = await h.waitForFinal(run.id, 60_000);
      expect(
        target.seen.logins.map((b) => JSON.parse(b) as unknown),
        output.join("\n"),
      ).toEqual([{ user: "ann", password: "pw-login-51d2" }]);
      expect(target.seen.upgrades).toEqual([{ url: "/echo?token=qtok-88e1", authorization: "Bearer hdr-7f3a9c" }]);
      expect(done.status, done.reason ?? "").not.toBe("errored");
    } finally {
      await target.close();
    }
  }, 90_000);
});

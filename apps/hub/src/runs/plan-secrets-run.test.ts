import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { planSchema, SECRET_MARKER, type ShardJob } from "@volley/contracts";
import { insertRun, listShards, openPlan, parseSecretKeys } from "@volley/db";
import { enqueue, runJob } from "@volley/queue";
import { useHubHarness } from "../test-support/use-hub-harness";

// A plan's target credentials are stored sealed and redacted (db plan-secrets-box): the run row, the
// shard rows and the shard's BullMQ job hold none of them, and the agent is still handed the real plan.

const keys = parseSecretKeys(randomBytes(32).toString("base64"));
const h = useHubHarness({ secretsKeys: keys, armTimeoutMs: 10_000 });

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
});

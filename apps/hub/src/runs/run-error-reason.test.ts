import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { getRunOfAnyOrg } from "@volley/db";
import { DatabaseRelay } from "../test-support/database-relay";
import { testPlan } from "../test-support/fixtures";
import { until } from "../test-support/until";
import { useHubHarness } from "../test-support/use-hub-harness";

// A hub that loses PostgreSQL while a run waits for agents ends the run errored. The run's reason
// is what users read (run page, API, webhooks): it says the database was lost, in words, not the
// driver's "Failed query: select … params: …"; the driver's error is in the hub's log. The hub
// reaches the real PostgreSQL through a TCP relay the test cuts (every connection dropped, new
// ones refused) and later restores.

let relay: DatabaseRelay | undefined;
const logLines: string[] = [];

// Registered before the harness, so it runs after the harness has closed the hub (vitest's stack order).
afterAll(async () => {
  await relay?.close();
});
const h = useHubHarness(
  {
    log: pino(
      { level: "info" },
      new Writable({
        write(chunk, _enc, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    ),
  },
  {
    // The hub reaches its database through the relay; the test reads it directly.
    async hubDatabaseUrl(url) {
      const started = await DatabaseRelay.start(url);
      relay = started.relay;
      return started.url;
    },
  },
);
// Before the harness closes the hub, which needs its database to stop cleanly.
afterAll(() => relay?.restore());

describe("a run whose hub loses the database", () => {
  it("ends errored with a reason in words, the driver's error in the hub's log", async () => {
    // No agent ever connects: the run waits in its pool's line, reading its row every second.
    const runId = await h.startRun(testPlan({ name: "db lost" }));
    await until("the run waiting in the line", async () => logLines.some((l) => l.includes(runId) && l.includes("run waiting for agents")), 20_000);

    relay!.drop();
    await until("the run's execution failed", async () => logLines.some((l) => l.includes(runId) && l.includes("run execution failed")), 20_000);
    // The hub retries the errored status every 2 s until the database answers again.
    relay!.restore();
    const ended = await until(
      "the run errored",
      async () => {
        const row = await getRunOfAnyOrg(h.db.db, runId);
        return row?.status === "errored" ? row : null;
      },
      20_000,
    );

    expect(ended.reason).toMatch(/^the hub lost its connection to the database \(PostgreSQL\) while running this run/);
    expect(ended.reason).not.toMatch(/Failed query|select|params|ECONNREFUSED|terminated|127\.0\.0\.1/i);
    const failed = logLines.find((l) => l.includes(runId) && l.includes("run execution failed"))!;
    const logged = JSON.parse(failed) as { err: string; reason: string };
    // The log keeps what the driver said, beneath drizzle's query text.
    expect(logged.err).toMatch(/Failed query: .*caused by: .*(Connection terminated|ECONNREFUSED|ECONNRESET|not queryable)/s);
    expect(logged.reason).toBe(ended.reason);
  });
});

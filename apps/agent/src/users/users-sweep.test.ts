import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type PlanInput } from "@volley/contracts";
import { startTodoApi, TODO_API_PATHS, type TestApp, type TodoApiStats } from "@volley/targets";
import { RunTally } from "@volley/metrics";
import { runSweep, total } from "../engine/engine-test-kit";

const apps: TestApp<TodoApiStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

/** Each user logs in and creates one todo with the token from the login. */
const LOGIN_AND_CREATE = [
  {
    request: {
      name: "login",
      method: "POST",
      url: TODO_API_PATHS.login,
      json: { user: "u{{ conn.index }}", password: "secret" },
      capture: { token: "$.token" },
    },
  },
  {
    request: {
      name: "create",
      method: "POST",
      url: TODO_API_PATHS.todos,
      headers: { authorization: "Bearer {{ vars.token }}" },
      json: { title: "todo of u{{ conn.index }}" },
    },
  },
];

const sweepOfUsers = (url: string, count: number, sweep: PlanInput["sweep"]) =>
  planSchema.parse({
    name: "todo users sweep",
    target: { url, protocol: "http", connectTimeout: "5s" },
    connections: { count },
    scenario: { kind: "users", arrivalRate: 20, duration: "30s", maxUserTime: "10s" },
    flow: { steps: LOGIN_AND_CREATE },
    sweep,
  });

describe("users: a sweep of the arrival rate finds the server's capacity", { timeout: 60_000 }, () => {
  it("holds while the todo store keeps up (50 creates/s), breaks p95 at the first rate above it; started and completed match the app's own counters", async () => {
    const app = await startTodoApi({ createsPerSecond: 50 });
    apps.push(app);
    const plan = sweepOfUsers(app.httpUrl, 100, {
      from: 20,
      step: 20,
      steps: 4,
      warmup: "1s",
      hold: "2s",
      gap: "1s",
      stopWhen: { p95: "200ms", usersFailedRate: 1 },
    });
    const { outcome, frames, summary } = await runSweep(plan);

    expect(outcome.status).toBe("completed");
    // 20 and 40 users/s: each create waits its 20 ms write. 60/s: the store falls 10 creates behind every second.
    expect(outcome.sweepStopped).toMatch(/^step 2 \(60 users\/s\) broke stopWhen: p95 \d+(\.\d+)?ms > 200ms$/);
    const steps = summary.steps!;
    expect(steps.map((s) => [s.plannedRate, s.per, s.failed, s.generatorLimited])).toEqual([
      [20, "aggregate", false, false],
      [40, "aggregate", false, false],
      [60, "aggregate", true, false],
    ]);
    // Open arrival at the step's rate over each 2 s hold (and its 1 s warm-up, not judged), none in the gaps, none after the failed step.
    expect(steps.map((s) => s.users!.started)).toEqual([40, 80, 120]);
    expect(frames.filter((f) => f.warmup).map((f) => f.counters[COUNTERS.usersStarted])).toEqual([20, 40, 60]);
    expect(steps.every((s) => s.users!.failed === 0 && s.users!.dropped === 0)).toBe(true);
    expect(steps[2]!.latency.p95).toBeGreaterThan(200);
    expect(summary.capacity).toMatchObject({ slo: "p95 <= 200ms, users failed <= 1%", rate: 40, step: 1, lowerBound: false, agentSaturated: false });
    expect(summary.capacity!.endedBy).toMatch(/^the step at 60 users\/s broke it: p95/);
    // The hub's run meter folds frame by frame to the same steps.
    const tally = new RunTally();
    for (const f of frames) tally.add({ ...f, agentId: "a", shardId: "s" });
    expect(tally.sweepSteps(plan)).toEqual(steps);

    // Every user that started logged in, and every one that completed created its todo: the app's own counts.
    const started = total(frames, COUNTERS.usersStarted);
    expect(started).toBe(360);
    const stats = app.stats();
    expect(stats.logins).toBe(started);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(stats.created);
    expect(stats.created).toBe(started);
    expect(total(frames, COUNTERS.usersFailed)).toBe(0);
  });

  it("a step whose arrivals found every user slot busy was limited by the plan, not the server: marked, deciding nothing", async () => {
    // 10 creates/s and 4 users at once: at 15 users/s users pile up behind the store until no slot is free.
    const app = await startTodoApi({ createsPerSecond: 10 });
    apps.push(app);
    const plan = sweepOfUsers(app.httpUrl, 4, { from: 5, step: 10, steps: 3, hold: "2s", gap: "1s", stopWhen: { p99: "10s" } });
    const { outcome, frames, summary } = await runSweep(plan);

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toMatch(
      /^step 1 \(15 users\/s\) was limited by the agent, not the server \(\d+ arrivals found all 4 user slots busy \(connections.count\): raise connections.count\)/,
    );
    const steps = summary.steps!;
    expect(steps.map((s) => [s.plannedRate, s.failed, s.generatorLimited])).toEqual([
      [5, false, false],
      [15, false, true],
    ]);
    expect(steps[1]!.users!.dropped).toBeGreaterThan(0);
    expect(summary.capacity).toMatchObject({ rate: 5, agentSaturated: true });
    // Dropped arrivals never reached the app; every started user did.
    const stats = app.stats();
    expect(stats.logins).toBe(total(frames, COUNTERS.usersStarted));
    expect(stats.created).toBe(total(frames, COUNTERS.usersCompleted));
  });
});

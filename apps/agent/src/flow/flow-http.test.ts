import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, type PlanInput } from "@volley/contracts";
import { startTodoApi, type TodoApiStats, type TestApp } from "@volley/targets";
import { histogramCount, runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<TodoApiStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function todoApi(): Promise<TestApp<TodoApiStats>> {
  const app = await startTodoApi();
  apps.push(app);
  return app;
}

type Flow = NonNullable<PlanInput["flow"]>;
const login: Flow["setup"] = [
  { request: { name: "login", method: "POST", url: "/api/login", json: { user: "{{ data.user }}", password: "secret" }, capture: { token: "$.token" } } },
];
/** Made with the bearer token; the response carries the ref the plan sent, so it is matched by id. */
const create = {
  name: "create",
  request: {
    method: "POST" as const,
    url: "/api/todos",
    headers: { authorization: "Bearer {{ vars.token }}" },
    json: { title: "todo #{{ msg.seq }}", ref: "{{ msg.id }}" },
  },
  reply: { match: { path: "$.ref", equals: "{{ msg.id }}" } },
};

function plan(app: TestApp<TodoApiStats>, flow: Partial<Flow>, extra: Partial<PlanInput> = {}): PlanInput {
  return {
    name: "todo api",
    target: { url: app.url, protocol: "http", connectTimeout: "5s" },
    connections: { count: 3, rate: 100 },
    scenario: { kind: "echo", duration: "2s", message: { rate: 4, timeout: "5s" } },
    flow: { data: { rows: [{ user: "ann" }, { user: "bob" }, { user: "cid" }] }, setup: login, ...flow },
    ...extra,
  };
}

describe("flows against a REST API (login, bearer token, session cookie)", { timeout: 30_000 }, () => {
  it("logs in per user, then each request's response is its reply; counts equal the API's own", async () => {
    const app = await todoApi();
    const list = {
      name: "list",
      weight: 1,
      // No authorization header: the session cookie the login set is what lets this one in.
      request: { method: "GET" as const, url: "/api/todos" },
      reply: { match: { path: "$.count" } },
    };
    const { frames, outcome } = await run(plan(app, { messages: [create, list] }));
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(3 * 7);
    expect(stats.logins).toBe(3);
    expect(stats.unauthorized).toBe(0);
    expect(stats.created + stats.listed).toBe(sent);
    expect(stats.created).toBeGreaterThan(0);
    expect(stats.listed).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    expect(histogramCount(frames, `${HISTOGRAMS.messageLatency}.create`)).toBe(stats.created);
    expect(histogramCount(frames, `${HISTOGRAMS.messageLatency}.list`)).toBe(stats.listed);
    expect(histogramCount(frames, "setup.login")).toBe(3);
  });

  it("a response that fails the reply check is counted unmatched, sampled, and its message lost", async () => {
    const app = await todoApi();
    const wrong = { ...create, reply: { match: { path: "$.reference", equals: "{{ msg.id }}" } } };
    const { frames } = await run(
      plan(app, { messages: [wrong] }, { sanity: false, scenario: { kind: "echo", duration: "1s", message: { rate: 3, timeout: "1s" } } }),
    );
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(app.stats().created).toBe(sent);
    expect(total(frames, "unmatched.message")).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(sent);
    const samples = frames.flatMap((f) => f.samples ?? []);
    expect(JSON.parse(samples[0]!.data)).toMatchObject({ title: expect.stringMatching(/^todo #/), owner: expect.any(String) });
  });

  it("an answer outside 2xx is a protocol error per message: without the login every create is refused", async () => {
    const app = await todoApi();
    const { frames } = await run(
      plan(
        app,
        { setup: [], data: undefined, messages: [{ ...create, request: { ...create.request, headers: { authorization: "Bearer nobody" } } }] },
        { sanity: false, scenario: { kind: "echo", duration: "1s", message: { rate: 3, timeout: "1s" } } },
      ),
    );
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(app.stats().unauthorized).toBe(sent);
    expect(total(frames, "errors.protocol")).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(sent);
  });
});

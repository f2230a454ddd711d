import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, flowAbsoluteUrls, planSchema, planSecrets, type PlanInput } from "@volley/contracts";
import { startTodoApi, TODO_API_PATHS, type TestApp, type TodoApiStats } from "@volley/targets";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<TodoApiStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

/** Artillery's before/after: one login for the whole shard, every user creating with its token, one listing at the end. */
function plan(url: string, password = "secret"): PlanInput {
  return {
    name: "todo users with before and after",
    target: { url, protocol: "http", connectTimeout: "5s" },
    connections: { count: 20 },
    scenario: { kind: "users", arrivalRate: 10, duration: "1s", maxUserTime: "5s" },
    flow: {
      before: [{ request: { name: "login", method: "POST", url: TODO_API_PATHS.login, json: { user: "setup", password }, capture: { token: "$.token" } } }],
      steps: [
        {
          request: {
            name: "create",
            method: "POST",
            url: TODO_API_PATHS.todos,
            headers: { authorization: "Bearer {{ vars.token }}" },
            json: { title: "todo of u{{ conn.index }}" },
          },
        },
      ],
      after: [{ request: { name: "list", method: "GET", url: TODO_API_PATHS.todos, headers: { authorization: "Bearer {{ vars.token }}" } } }],
    },
  };
}

describe("flow.before and flow.after: once per shard around its users", { timeout: 30_000 }, () => {
  it("logs in once before the first user, every user creates with that token, and lists once after the last: the API's own counts", async () => {
    const app = await startTodoApi();
    apps.push(app);
    const { frames, outcome } = await run(plan(app.httpUrl));
    expect(outcome.status, outcome.error).toBe("completed");
    const started = total(frames, COUNTERS.usersStarted);
    expect(started).toBe(10);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(10);
    expect(app.stats()).toEqual({ logins: 1, created: 10, listed: 1, unauthorized: 0 });
    expect(histogramCount(frames, "step.before.login")).toBe(1);
    expect(histogramCount(frames, "step.after.list")).toBe(1);
    expect(histogramCount(frames, "step.create")).toBe(10);
  });

  it("a before request that fails errors the shard naming it, and no user arrives", async () => {
    const app = await startTodoApi();
    apps.push(app);
    const { frames, outcome } = await run(plan(app.httpUrl, "wrong"));
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/^flow\.before\.0 \(login\): POST \/api\/login answered HTTP 401: \{"error":"wrong user or password"\}$/);
    expect(total(frames, COUNTERS.usersStarted)).toBe(0);
    expect(app.stats().created).toBe(0);
  });

  it("with expect: { status: any } a refused before request goes on, as Artillery's hooks do: the users run and meet the refusal themselves", async () => {
    const app = await startTodoApi();
    apps.push(app);
    const input = plan(app.httpUrl, "wrong");
    input.flow!.before![0]!.request.capture = undefined;
    input.flow!.before![0]!.request.expect = { status: "any" };
    input.flow!.steps![0] = { request: { ...(input.flow!.steps![0] as { request: object }).request, headers: { authorization: "Bearer none" } } } as never;
    input.flow!.after![0]!.request.headers = { authorization: "Bearer none" };
    input.flow!.after![0]!.request.expect = { status: "any" };
    const { frames, outcome } = await run(input);
    expect(outcome.status, outcome.error).toBe("completed");
    expect(total(frames, COUNTERS.usersStarted)).toBe(10);
    expect(total(frames, COUNTERS.usersFailed)).toBe(10);
    expect(app.stats()).toMatchObject({ logins: 0, created: 0, unauthorized: 11 });
    expect(histogramCount(frames, "step.before.login")).toBe(1);
  });

  it("their credentials are sealed like any request's, and an absolute URL of theirs is checked by the target policy", () => {
    const input = plan("http://127.0.0.1:9/");
    input.flow!.before![0]!.request.url = "http://auth.example.com/api/login";
    const parsed = planSchema.parse(input);
    expect(planSecrets(parsed).map((p) => p.path.join("."))).toContain("flow.before.0.request.json.password");
    expect(flowAbsoluteUrls(parsed)).toContainEqual({ field: "plan.flow.before.0.request.url", url: "http://auth.example.com/api/login" });
  });

  it("is refused outside users, and a user's own variables in before are refused naming the field", () => {
    const users = plan("http://127.0.0.1:9/");
    users.flow!.before![0]!.request.json = { user: "u{{ conn.index }}", password: "secret" };
    const r = planSchema.safeParse(users);
    expect(r.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toContain(
      "flow.before.0.request.json.user: {{ conn.index }} belongs to a user, and before runs once for all of them: use a literal or a capture of an earlier before request",
    );
    const conns = planSchema.safeParse({
      name: "x",
      target: { url: "ws://127.0.0.1:9/x" },
      connections: { count: 1 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      flow: { before: [{ request: { method: "POST", url: "/login" } }] },
    });
    expect(conns.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toContain(
      "flow.before: runs once per shard around the users: set scenario.kind: users, or make the requests setup steps of each connection",
    );
  });
});

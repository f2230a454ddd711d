import { describe, expect, it } from "vitest";
import { planSchema, type PlanInput } from "./index";

type Poll = NonNullable<NonNullable<NonNullable<PlanInput["target"]>["polling"]>["poll"]>;

/** The long-polling chat in apps/targets, driven through its own routes. */
function chat(poll: Poll | undefined, flow: PlanInput["flow"] | null = undefined, protocol: "long-polling" | "short-polling" = "long-polling"): PlanInput {
  return {
    name: "poll chat",
    target: { url: "http://127.0.0.1:9015", protocol, polling: poll ? { poll } : {} },
    connections: { count: 2, rate: 10 },
    scenario: { kind: "broadcast", room: "chat", echo: true, duration: "2s", message: { rate: 1 } },
    ...(flow === null
      ? {}
      : {
          flow: flow ?? {
            setup: [{ request: { method: "POST", url: "/chat/session", json: {}, capture: { sessionId: "$.sessionId", cursor: "$.cursor" } } }],
            messages: [
              {
                request: { method: "POST", url: "/chat/send", json: { sessionId: "{{ vars.sessionId }}", clientMsgId: "{{ msg.id }}" } },
                reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
              },
            ],
          },
        }),
  };
}

const poll: Poll = { url: "/chat/poll?sessionId={{ vars.sessionId }}&cursor={{ vars.cursor }}", items: "$.messages", capture: { cursor: "$.cursor" } };

function problems(plan: PlanInput): string[] {
  const r = planSchema.safeParse(plan);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("target.polling.poll", () => {
  it("accepts the application's own poll in a flow, on long and short polling", () => {
    expect(problems(chat(poll))).toEqual([]);
    expect(problems(chat(poll, undefined, "short-polling"))).toEqual([]);
    const parsed = planSchema.parse(chat(poll));
    expect(parsed.target.polling?.poll).toMatchObject({ method: "GET", items: "$.messages" });
  });

  it("a flow on a polling target needs the poll; a poll needs a flow", () => {
    expect(problems(chat(undefined))).toEqual([
      expect.stringMatching(/^target\.polling\.poll: a flow on long-polling polls the application's own route: add target\.polling\.poll/),
    ]);
    expect(problems(chat(poll, null))).toEqual([expect.stringMatching(/^target\.polling\.poll: a poll request belongs to a flow .*add flow: \{ messages/)]);
  });

  it("refuses captures not made before the connection opens, and msg.*", () => {
    const flow: PlanInput["flow"] = {
      setup: [{ connect: {} }, { request: { method: "POST", url: "/chat/session", capture: { sessionId: "$.sessionId" } } }],
      messages: [{ request: { method: "POST", url: "/chat/send" }, reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } } }],
    };
    const p = problems(chat({ url: "/chat/poll?sessionId={{ vars.sessionId }}&n={{ msg.seq }}&c={{ vars.cursor }}", capture: { cursor: "$.cursor" } }, flow));
    expect(p).toEqual([
      expect.stringMatching(
        /^target\.polling\.poll\.url: \{\{ vars\.sessionId \}\} is not captured before the connection opens: capture it in a setup request before the connect/,
      ),
      expect.stringMatching(/^target\.polling\.poll\.url: \{\{ msg\.seq \}\} only exists in flow\.messages/),
    ]);
  });

  it("names bad paths, bodies on GET and two bodies", () => {
    expect(problems(chat({ ...poll, items: "$.messages[" }))).toEqual([expect.stringMatching(/^target\.polling\.poll\.items: /)]);
    expect(problems(chat({ ...poll, items: "messages" }))).toContainEqual(
      expect.stringMatching(/^target\.polling\.poll\.items: must be a JSON path like \$\.messages/),
    );
    expect(problems(chat({ ...poll, json: { a: 1 } }))).toEqual([
      expect.stringMatching(/^target\.polling\.poll\.method: a GET carries no body: set method: POST/),
    ]);
    expect(problems(chat({ ...poll, method: "POST", json: { a: 1 }, body: "x" }))).toEqual([
      expect.stringMatching(/^target\.polling\.poll\.body: give json or body, not both/),
    ]);
  });

  it("refuses setup steps that would do nothing on SSE, polling and HTTP, naming the step to use", () => {
    const send = { send: { json: { hello: 1 } } };
    expect(
      problems(
        chat(poll, {
          setup: [send],
          messages: [{ request: { method: "POST", url: "/chat/send" }, reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } } }],
        }),
      ),
    ).toContainEqual(expect.stringMatching(/^flow\.setup\.0: on long-polling nothing is sent on the connection: use a request step/));
    const http: PlanInput = {
      name: "api",
      target: { url: "http://127.0.0.1:9016/api", protocol: "http" },
      connections: { count: 1, rate: 10 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      flow: {
        setup: [{ connect: { headers: { a: "b" } } }, { waitFor: { event: undefined } }],
        messages: [{ request: { method: "GET", url: "/todos" }, reply: {} }],
      },
    };
    expect(problems(http)).toEqual([
      expect.stringMatching(/^flow\.setup\.0: an HTTP flow opens no connection .*put headers on the requests/),
      expect.stringMatching(/^flow\.setup\.1: an HTTP target pushes nothing to wait for/),
    ]);
  });

  it("on SSE, replies, waits and server push name the event type", () => {
    const sse: PlanInput = {
      name: "news",
      target: { url: "http://127.0.0.1:9014/news/stream", protocol: "sse" },
      connections: { count: 1, rate: 10 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      flow: {
        setup: [{ waitFor: { event: "hello" } }],
        messages: [
          {
            request: { method: "POST", url: "/news/publish", json: { clientMsgId: "{{ msg.id }}" } },
            reply: { event: "headline", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
        push: [{ event: "ticker", timestamp: "$.ts" }],
      },
    };
    expect(problems(sse)).toEqual([]);
  });
});

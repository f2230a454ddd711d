import { describe, expect, it } from "vitest";
import { compileJsonPath, compileValue, flowAbsoluteUrls, literalHost, planJsonSchema, planSchema, type PlanInput, type TemplateContext } from "./index";

const chat: PlanInput = {
  name: "chat",
  target: { url: "http://127.0.0.1:9010", protocol: "socketio" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", duration: "2s", message: { rate: 1 } },
  flow: {
    data: { rows: [{ user: "ann" }, { user: "bob" }] },
    setup: [
      { request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" }, capture: { token: "$.token" } } },
      { connect: { auth: { token: "{{ vars.token }}" } } },
      { send: { event: "join", json: { room: "lobby" } } },
      { waitFor: { event: "joined", capture: { members: "$.members" } } },
    ],
    messages: [
      {
        event: "chat",
        json: { room: "lobby", text: "hi {{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
        reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
      },
    ],
  },
};

function problems(plan: PlanInput): string[] {
  const r = planSchema.safeParse(plan);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}
const withFlow = (flow: object, extra: object = {}): PlanInput => ({ ...chat, ...extra, flow: { ...chat.flow, ...flow } }) as PlanInput;

describe("plan flow validation", () => {
  it("accepts a real chat app's flow", () => {
    expect(problems(chat)).toEqual([]);
  });

  it("names an unknown variable and the ones that exist", () => {
    const p = problems(withFlow({ messages: [{ event: "chat", json: { text: "{{ msg.sequence }}" }, reply: { event: "message" } }] }));
    expect(p).toEqual([expect.stringMatching(/^flow\.messages\.0\.json\.text: unknown variable \{\{ msg\.sequence \}\}: use conn\.index/)]);
  });

  it("refuses a capture used before it is made, and msg.* outside messages", () => {
    const p = problems(withFlow({ setup: [{ connect: { auth: { token: "{{ vars.token }}" } } }, { send: { event: "join", json: { n: "{{ msg.seq }}" } } }] }));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.connect\.auth\.token: \{\{ vars\.token \}\} is not captured before this point/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.1\.send\.json\.n: \{\{ msg\.seq \}\} only exists in flow\.messages/));
  });

  it("refuses options that do not fit the protocol", () => {
    const ws = { target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" } };
    const p = problems(withFlow({ setup: [], messages: [{ event: "chat", text: "x", reply: { ack: true } }] }, ws));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: protocol ws has no events/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.ack: only Socket\.IO and SocketCluster acknowledge/));
  });

  it("refuses Socket.IO 2's reserved event names with the fix", () => {
    const v2 = { target: { url: "http://127.0.0.1:9010", protocol: "socketio", socketio: { version: 2 } } };
    const p = problems(withFlow({ messages: [{ event: "ping", json: {}, reply: { event: "pong" } }] }, v2));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: "ping" is reserved by the Socket\.IO 2 client/));
    // Why (the v2 client's own connection events) and what a v2 app must do (an event name of its own).
    const why = p.find((m) => m.startsWith("flow.messages.0.event"))!;
    expect(why).toContain("for its own connection events, so an app can neither emit them nor listen for them");
    expect(why).toContain('like "chat:ping"');
    // The reply's event is checked alike: listening for "pong" hears the client's own heartbeat.
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: "pong" is reserved by the Socket\.IO 2 client.*like "chat:pong"$/));
  });

  it("refuses a reserved v2 event in target.socketio.event too, and auth on Socket.IO 2", () => {
    const v2 = { target: { url: "http://127.0.0.1:9010", protocol: "socketio", socketio: { version: 2, event: "ping" } } };
    const p = problems(withFlow({}, v2));
    expect(p).toContainEqual(
      expect.stringMatching(/^target\.socketio\.event: "ping" is reserved by the Socket\.IO 2 client.*own connection events.*like "chat:ping"$/),
    );
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.1\.connect\.auth: Socket\.IO 2 has no handshake auth payload/));
  });

  it("needs the message id to match broadcast deliveries", () => {
    const broadcast = { scenario: { kind: "broadcast", duration: "2s", message: { rate: 1 } } };
    const p = problems(withFlow({ messages: [{ event: "chat", json: {}, reply: { event: "message" } }] }, broadcast));
    expect(p).toEqual([expect.stringMatching(/^flow\.messages\.0\.reply\.match: a broadcast delivery is matched on every receiver/)]);
  });

  it("checks data rows, columns and JSON paths", () => {
    const p = problems(
      withFlow({ data: { csv: "name\nann" }, messages: [{ event: "chat", json: { u: "{{ data.user }}" }, reply: { event: "m", match: { path: "$..id" } } }] }),
    );
    expect(p).toContainEqual("flow.data: has 1 rows for 2 connections: add rows, or set reuse: true to let connections share them");
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.request\.json\.user: flow\.data has no column "user"/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.match\.path: cannot read "\.\.id"/));
  });

  it("refuses a request URL whose host is a template, which no target policy could check", () => {
    const setup = [
      { request: { method: "POST", url: "http://{{ data.user }}.example.com/login", capture: { token: "$.token" } } },
      ...chat.flow!.setup!.slice(1),
    ];
    const p = problems(withFlow({ setup }));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.request\.url: the URL's host must be written out/));
    expect(literalHost("https://auth.example.com:8443/login?u={{ data.user }}")).toBe("auth.example.com");
    const literal = [{ request: { method: "POST", url: "https://auth.example.com/login", capture: { token: "$.token" } } }, ...chat.flow!.setup!.slice(1)];
    expect(flowAbsoluteUrls(planSchema.parse(withFlow({ setup: literal })))).toEqual([
      { field: "plan.flow.setup.0.request.url", url: "https://auth.example.com/login" },
    ]);
  });

  it("needs a request to publish on SSE; a reply's event is the SSE event type", () => {
    const sse = { target: { url: "http://127.0.0.1:9014/news/stream", protocol: "sse" } };
    const p = problems(withFlow({ setup: [], messages: [{ event: "news", json: { title: "x" }, reply: { event: "headline" } }] }, sse));
    expect(p).toEqual([
      expect.stringMatching(/^flow\.messages\.0\.event: protocol sse has no events/),
      expect.stringMatching(/^flow\.messages\.0\.request: on sse a message is an HTTP request/),
    ]);
  });
});

describe("SocketCluster flows", () => {
  const sc = {
    target: { url: "ws://127.0.0.1:9013/socketcluster/", protocol: "socketcluster" },
    scenario: { kind: "broadcast", room: "lobby", duration: "2s", message: { rate: 1 } },
  };
  const publish = {
    event: "#publish",
    json: { channel: "{{ conn.room }}", data: { id: "{{ msg.id }}" } },
    reply: { event: "#publish", match: { path: "$.data.id", equals: "{{ msg.id }}" } },
  };

  it("accepts channels by SocketCluster's own names: #subscribe with ack in setup, #publish { channel, data }", () => {
    expect(
      problems(withFlow({ setup: [{ send: { event: "#subscribe", json: { channel: "{{ conn.room }}" }, ack: true } }], messages: [publish] }, sc)),
    ).toEqual([]);
  });

  it("refuses a #subscribe that cannot be confirmed or names no channel, a malformed #publish, and other # names", () => {
    const p = problems(
      withFlow(
        {
          setup: [{ send: { event: "#subscribe", json: { room: "lobby" } } }, { waitFor: { event: "#subscribe" } }],
          messages: [
            { ...publish, json: { channel: "lobby" } },
            { ...publish, event: "#authenticate" },
            { ...publish, event: "#subscribe" },
          ],
        },
        sc,
      ),
    );
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.send\.json: #subscribe names its channel/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.send\.ack: set ack: true/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.1\.waitFor\.event: "#subscribe" never reaches a flow/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.json: #publish carries the channel and the message/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.1\.event: "#authenticate" is reserved by SocketCluster/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.2\.event: subscribe once per connection in a setup step/));
  });
});

describe("STOMP flows", () => {
  const stomp = { target: { url: "ws://127.0.0.1:15674/ws", protocol: "stomp" } };

  it("needs the destinations a SEND goes to and a reply or wait arrives on", () => {
    const ok = { event: "/topic/chat", json: { id: "{{ msg.id }}" }, reply: { event: "/topic/chat", match: { path: "$.id", equals: "{{ msg.id }}" } } };
    expect(problems(withFlow({ setup: [], messages: [ok] }, stomp))).toEqual([]);
    const p = problems(
      withFlow(
        { setup: [{ send: { json: {} } }, { waitFor: { match: { path: "$.ok" } } }], messages: [{ json: {}, reply: { match: { path: "$.id" } } }] },
        stomp,
      ),
    );
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.send\.event: on STOMP a SEND needs its destination/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.1\.waitFor\.event: on STOMP a message arrives on a subscription/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: on STOMP a SEND needs its destination/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: on STOMP a reply arrives on a subscription/));
  });

  it("takes per-connection destinations as templates, without msg.* where messages arrive", () => {
    const queue = "/queue/reply-{{ conn.index }}";
    const ok = { event: queue, json: { id: "{{ msg.id }}" }, reply: { event: queue, match: { path: "$.id", equals: "{{ msg.id }}" } } };
    expect(problems(withFlow({ setup: [], messages: [ok] }, stomp))).toEqual([]);
    const p = problems(withFlow({ setup: [], messages: [{ ...ok, event: "/queue/q-{{ msg.sek }}", reply: { event: "/queue/r-{{ msg.seq }}" } }] }, stomp));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: unknown variable \{\{ msg\.sek \}\}/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: \{\{ msg\.seq \}\} only exists in flow\.messages/));
    const io = problems(withFlow({ messages: [{ event: "chat", json: {}, reply: { event: "reply-{{ conn.index }}" } }] }));
    expect(io).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: only STOMP destinations and MQTT topics may be templates/));
  });
});

describe("flow in generated schemas", () => {
  it("appears in the plan's JSON Schema (editor completion) without recursing", () => {
    const schema = planJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    expect(Object.keys(schema.properties.flow!.properties!)).toEqual(expect.arrayContaining(["data", "setup", "messages", "push", "samples"]));
  });

  it("refuses a body that is not JSON", () => {
    const p = problems(withFlow({ messages: [{ event: "chat", json: { when: new Date(0) }, reply: { event: "message" } }] }));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.json: must be a JSON value/));
  });
});

describe("templates and paths", () => {
  const ctx: TemplateContext = { connIndex: 7, connRoom: "r1", msgId: "a.b.c", msgSeq: 3, data: { user: "ann" }, vars: { token: "t0k" } };

  it("keeps a whole-variable leaf's type and writes text elsewhere", () => {
    const render = compileValue({ seq: "{{ msg.seq }}", text: "#{{ msg.seq }} from {{ data.user }}", auth: ["{{ vars.token }}", 1], room: "{{conn.room}}" });
    expect(render(ctx)).toEqual({ seq: 3, text: "#3 from ann", auth: ["t0k", 1], room: "r1" });
  });

  it("reads fields, keys and indexes", () => {
    expect(compileJsonPath("$.a['b-c'][1].d")({ a: { "b-c": [0, { d: "x" }] } })).toBe("x");
    expect(compileJsonPath("$.missing.deeper")({ a: 1 })).toBeUndefined();
    expect(compileJsonPath("$")(5)).toBe(5);
  });
});

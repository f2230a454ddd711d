import { describe, expect, it } from "vitest";
import { planSchema } from "./plan";
import { planJsonSchema } from "./plan-json-schema";
import { planSecrets, redactPlan } from "./plan-secrets";
import { flowAbsoluteUrls } from "./flow-hosts";
import { defaultConnectionName, userConnections, userConnectUrl } from "./user-connections";

const users = (steps: unknown[], target: Record<string, unknown> = { url: "ws://127.0.0.1:8080/ws", protocol: "ws" }) => ({
  name: "users",
  target,
  connections: { count: 100 },
  scenario: { kind: "users", arrivalRate: 10, duration: "30s" },
  flow: { steps },
});

const issues = (input: unknown) => {
  const r = planSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

const FEED = { connect: { connection: "feed", protocol: "sse", url: "/api/rooms/r1/events" } };
const ON_FEED = { waitFor: { connection: "feed", event: "message", match: { path: "$.id" } } };

describe("a user's named connections", () => {
  it("accepts a WebSocket and an SSE feed held at once, steps naming which they use", () => {
    const plan = users([
      { connect: {} },
      FEED,
      { request: { method: "POST", url: "/api/rooms/r1/messages", json: { text: "hi" }, capture: { id: "$.id" } } },
      ON_FEED,
      { send: { json: { type: "history", requestId: "{{ msg.id }}" }, reply: { match: { path: "$.requestId", equals: "{{ msg.id }}" } } } },
      { disconnect: { connection: "feed" } },
      { disconnect: true },
    ]);
    expect(issues(plan)).toEqual([]);
    const parsed = planSchema.parse(plan);
    const links = userConnections(parsed);
    expect([...links.keys()]).toEqual(["main", "feed"]);
    // A relative URL keeps the target's host and takes the scheme the protocol connects with.
    expect(links.get("feed")).toMatchObject({ protocol: "sse", url: "http://127.0.0.1:8080/api/rooms/r1/events", position: "2" });
    expect(links.get("main")).toMatchObject({ protocol: "ws", url: "ws://127.0.0.1:8080/ws" });
  });

  it("the first connect's connection is the one steps naming none use, whatever its name", () => {
    const steps = [FEED, { waitFor: { event: "message" } }, { disconnect: true }];
    expect(issues(users(steps, { url: "http://127.0.0.1:8080", protocol: "http" }))).toEqual([]);
    expect(defaultConnectionName(planSchema.parse(users(steps, { url: "http://127.0.0.1:8080", protocol: "http" })).flow!.steps!)).toBe("feed");
    expect(userConnectUrl("https://chat.example.com/app", "ws", "/socket")).toBe("wss://chat.example.com/socket");
    expect(userConnectUrl("ws://h:1/x", "sse", undefined)).toBe("http://h:1/x");
  });

  it("names the step, and the fix, for a connection used before it is opened, opened twice, or on a protocol users cannot hold", () => {
    const found = issues(
      users([
        { connect: {} },
        { waitFor: { connection: "feed", event: "message" } },
        FEED,
        { connect: { connection: "feed", protocol: "ws", url: "/other" } },
        { loop: { count: 2, steps: [FEED] } },
        { connect: { connection: "poll", protocol: "long-polling" } },
        { connect: { connection: "api", protocol: "http" } },
        { connect: { connection: "far", protocol: "sse", url: "ws://127.0.0.1:9/x" } },
        { disconnect: { connection: "nope" } },
        { send: { connection: "feed", json: { a: 1 }, ack: true } },
      ]),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'flow.steps.1.waitFor.connection: waitFor uses connection "feed", which no earlier step opens (it has main): add { connect: { connection: feed } } before it, or name one of those',
        'flow.steps.3.connect: connection "feed" is already opened by flow.steps.2 (sse to http://127.0.0.1:8080/api/rooms/r1/events); this step opens it as ws to ws://127.0.0.1:8080/other: give this one its own name, like connection: feed-2',
        expect.stringMatching(/^flow\.steps\.4\.loop\.steps\.0: connection "feed" is already open here/),
        expect.stringMatching(
          /^flow\.steps\.5\.connect\.protocol: a long-polling connection polls the application.s route in target\.polling\.poll, which belongs to the target: make the plan.s target the long-polling one/,
        ),
        "flow.steps.6.connect.protocol: HTTP has no connection to hold: make HTTP calls with request steps (capture from their responses)",
        "flow.steps.7.connect.url: use a URL starting with http:// or https:// for protocol sse, like http://127.0.0.1:9005/sse",
        expect.stringMatching(/^flow\.steps\.8\.disconnect\.connection: disconnect uses connection "nope", which no earlier step opens/),
        // Checked against the protocol of the connection the step uses: an SSE feed acknowledges nothing.
        expect.stringMatching(/^flow\.steps\.9\.send\.ack: only Socket\.IO and SocketCluster acknowledge \(this target is sse\)/),
      ]),
    );
    // A connection redefined is said once, not as opened twice too.
    expect(found.filter((f) => f.startsWith("flow.steps.3"))).toHaveLength(1);
  });

  it("a body codec is checked against the protocol of the connection its step uses", () => {
    const binary = { send: { connection: "feed", binary: { hex: "0102" } } };
    expect(issues(users([{ connect: {} }, FEED, binary]))).toEqual([expect.stringMatching(/^flow\.steps\.2\.send\.binary: sse carries text only/)]);
    // The same bytes on the target's WebSocket go.
    expect(issues(users([{ connect: {} }, FEED, { send: { binary: { hex: "0102" } } }]))).toEqual([]);
  });

  it("a connection closed in every branch may be opened again; one still open in a branch may not", () => {
    const again = [FEED, { if: { var: "data.x", equals: "1" }, steps: [{ disconnect: { connection: "feed" } }], else: [] }, FEED];
    const withData = (steps: unknown[]) => ({ ...users(steps), flow: { steps, data: { rows: [{ x: "1" }], reuse: true } } });
    // Open after the if in the else branch only: not certainly open, so the connect may reopen it (at run time it keeps an open one).
    expect(issues(withData(again))).toEqual([]);
    const closed = [FEED, { disconnect: { connection: "feed" } }, FEED];
    expect(issues(users(closed))).toEqual([]);
    expect(issues(users([FEED, { think: "1s" }, FEED]))).toEqual([expect.stringMatching(/^flow\.steps\.2: connection "feed" is already open here/)]);
  });

  it("today's single-connection steps mean what they meant: a connect, its sends, a disconnect and a connect again", () => {
    expect(issues(users([{ connect: {} }, { disconnect: true }, { connect: {} }, { send: { json: { a: 1 } } }]))).toEqual([]);
    // An HTTP target's users still cannot connect without a protocol of their own.
    expect(issues(users([{ connect: {} }], { url: "http://127.0.0.1:8080", protocol: "http" }))).toEqual([
      expect.stringMatching(/^flow\.steps\.0: an HTTP target has no connection to open, send on or wait on/),
    ]);
  });

  it("the target policy sees the hosts of a user's connections and requests, and refuses a host made by a template", () => {
    const plan = planSchema.parse(
      users([
        { connect: {} },
        { connect: { connection: "feed", protocol: "sse", url: "http://feeds.example.com/events" } },
        { request: { url: "https://api.example.com/login" } },
      ]),
    );
    expect(flowAbsoluteUrls(plan).map((u) => u.field)).toEqual(["plan.flow.steps.1.connect.url", "plan.flow.steps.2.request.url"]);
    expect(issues(users([{ connect: { connection: "feed", protocol: "sse", url: "http://{{ data.host }}/events" } }]))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^flow\.steps\.0\.connect\.url: the URL's host must be written out/)]),
    );
  });

  it("a credential in a connection's URL is a plan secret, redacted for viewers as a request URL's is", () => {
    const plan = users([{ connect: {} }, { connect: { connection: "feed", protocol: "sse", url: "/events?token=s3cret&room=r1" } }]);
    expect(planSecrets(plan)).toContainEqual({ path: ["flow", "steps", 1, "connect", "url"], kind: "url" });
    const shown = JSON.stringify(redactPlan(plan));
    expect(shown).not.toContain("s3cret");
    expect(shown).toContain("room=r1");
  });

  it("the JSON Schema offers connection, protocol and url on a user's connect, and connection on its sends, waits and disconnects", () => {
    const text = JSON.stringify(planJsonSchema());
    for (const phrase of [
      "Names this connection, so a user holds several",
      "This connection's protocol; absent: target.protocol",
      "The connection this step uses",
    ])
      expect(text).toContain(phrase);
  });
});

import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parsePlanDocument } from "./plan-document";
import { keepRedactedSecrets, planSecrets, redactPlan, redactYamlSource, restoreYamlSource, SECRET_MARKER } from "./plan-secrets";

const names = (plan: unknown) => planSecrets(plan).map((s) => `${s.path.join(".")}:${s.kind}`);

const socketio = {
  name: "chat",
  target: {
    url: "http://ann:hunter2@127.0.0.1:9010/?room=lobby&access_token=abc123&sessionId={{ vars.sid }}",
    protocol: "socketio",
    headers: {
      Authorization: "Bearer static-token",
      Cookie: "sid=s3cr3t",
      "X-Api-Key": "k-1",
      "Content-Type": "application/json",
      "X-Auth": "Bearer {{ vars.token }}",
    },
  },
  connections: { count: 1 },
  scenario: { kind: "echo", duration: "5s" },
  flow: {
    data: { rows: [{ user: "ann", password: "pw-ann" }], csv: "user,password\nann,pw" },
    setup: [
      {
        request: {
          method: "POST",
          url: "/login?api_key=login-key",
          headers: { "x-session-token": "t-9" },
          json: { user: "{{ data.user }}", password: "{{ data.password }}", credentials: { secret: "nested", otp: "123" }, author: "ann" },
          capture: { token: "$.token" },
        },
      },
      { request: { method: "POST", url: "/form", body: "user=ann&password=pw2" } },
      {
        connect: {
          headers: { Authorization: "Basic YW5uOnB3" },
          query: { token: "q-tok", room: "lobby" },
          auth: { token: "{{ vars.token }}", extra: "a-1", nested: ["a-2"] },
        },
      },
      { send: { event: "login", json: { apiKey: "send-key", text: "hello" } } },
    ],
    messages: [{ event: "chat", json: { text: "{{ msg.seq }}", token: "m-tok" }, request: { url: "/m", headers: { Authorization: "Bearer m" } } }],
  },
};

describe("planSecrets", () => {
  it("finds each kind of credential field and leaves the rest alone", () => {
    expect(names(socketio)).toEqual([
      "target.url:url",
      "target.headers.Authorization:value",
      "target.headers.Cookie:value",
      "target.headers.X-Api-Key:value",
      "flow.data.rows.0.password:value",
      "flow.data.csv:value",
      "flow.setup.0.request.url:url",
      "flow.setup.0.request.headers.x-session-token:value",
      "flow.setup.0.request.json.credentials.secret:value",
      "flow.setup.0.request.json.credentials.otp:value",
      "flow.setup.1.request.body:value",
      "flow.setup.2.connect.headers.Authorization:value",
      "flow.setup.2.connect.query.token:value",
      "flow.setup.2.connect.auth.extra:value",
      "flow.setup.2.connect.auth.nested.0:value",
      "flow.setup.3.send.json.apiKey:value",
      "flow.messages.0.json.token:value",
      "flow.messages.0.request.headers.Authorization:value",
    ]);
  });

  it("covers STOMP passcodes, MQTT passwords, poll requests, http bodies and users' nested steps", () => {
    const plan = {
      target: {
        url: "ws://127.0.0.1/ws",
        stomp: { login: "guest", passcode: "guest-pass" },
        mqtt: { username: "u", password: "mqtt-pass" },
        http: { body: '{"token": "t"}' },
        polling: { poll: { url: "/poll?cursor=1", headers: { Authorization: "Bearer p" }, json: { secret: "s" } } },
      },
      flow: {
        steps: [
          { loop: { count: 2, steps: [{ request: { url: "/a", headers: { Cookie: "c=1" } } }] } },
          { choice: [{ steps: [{ send: { headers: { passcode: "frame-pass" } } }] }] },
          { if: { var: "vars.x" }, steps: [{ connect: { auth: { t: "x" } } }], else: [{ request: { url: "/b", json: { password: "p" } } }] },
        ],
      },
    };
    expect(names(plan)).toEqual([
      "target.stomp.passcode:value",
      "target.mqtt.password:value",
      "target.http.body:value",
      "target.polling.poll.headers.Authorization:value",
      "target.polling.poll.json.secret:value",
      "flow.steps.0.loop.steps.0.request.headers.Cookie:value",
      "flow.steps.1.choice.0.steps.0.send.headers.passcode:value",
      "flow.steps.2.steps.0.connect.auth.t:value",
      "flow.steps.2.else.0.request.json.password:value",
    ]);
  });

  it("redacts only the credential parts of a URL and every other secret whole", () => {
    const r = redactPlan(socketio);
    expect(r.target.url).toBe(`http://ann:${SECRET_MARKER}@127.0.0.1:9010/?room=lobby&access_token=${SECRET_MARKER}&sessionId={{ vars.sid }}`);
    expect(r.target.headers.Authorization).toBe(SECRET_MARKER);
    expect(r.target.headers["X-Auth"]).toBe("Bearer {{ vars.token }}");
    expect(r.flow.setup[0]!.request!.json!.user).toBe("{{ data.user }}");
    expect(JSON.stringify(r)).not.toMatch(/hunter2|abc123|static-token|s3cr3t|pw-ann|"nested"(?!:)|q-tok|a-1|a-2|send-key|m-tok|login-key/);
    expect(socketio.target.headers.Authorization).toBe("Bearer static-token"); // a copy, not in place
  });

  it("keeps a stored secret sent back redacted, and names a marker with nothing stored behind it", () => {
    const edited = redactPlan(socketio);
    edited.name = "renamed";
    edited.flow.setup[2]!.connect!.headers!.Authorization = "Basic new";
    const { plan, unresolved } = keepRedactedSecrets(edited, socketio);
    expect(unresolved).toEqual([]);
    expect(plan.name).toBe("renamed");
    expect(plan.target.url).toBe(socketio.target.url);
    expect(plan.target.headers.Authorization).toBe("Bearer static-token");
    expect(plan.flow.setup[2]!.connect!.headers!.Authorization).toBe("Basic new");
    const moved = { ...redactPlan(socketio), target: { ...redactPlan(socketio).target, headers: { "X-Api-Token": SECRET_MARKER } } };
    expect(keepRedactedSecrets(moved, socketio).unresolved).toEqual(["target.headers.X-Api-Token"]);
  });
});

describe("YAML sources", () => {
  const yaml = `# the author's comment
name: stomp   # inline
target:
  url: ws://127.0.0.1:15674/ws
  protocol: stomp
  headers: { Authorization: 'Bearer abc', X-Trace: "1" }
  stomp:
    login: guest
    passcode: &pc |
      guest
connections: { count: 2 }
scenario:
  kind: echo
  duration: 5s
  message: { rate: 1 }
flow:
  setup:
    - request: { method: POST, url: "http://127.0.0.1:1/login", json: { password: *pc } }
`;

  it("redacts each secret scalar in place and puts the author's exact text back", () => {
    const parsed = parsePlanDocument(yaml);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const redacted = redactYamlSource(yaml, parsed.plan)!;
    expect(redacted.text).not.toMatch(/abc|\|\n\s+guest/);
    expect(redacted.text).toContain("# the author's comment\nname: stomp   # inline\n");
    expect(redacted.text).toContain(`headers: { Authorization: "${SECRET_MARKER}", X-Trace: "1" }`);
    expect(parse(redacted.text).target.stomp).toEqual({ login: "guest", passcode: SECRET_MARKER });
    expect(parse(redacted.text).flow.setup[0].request.json.password).toBe(SECRET_MARKER);
    expect(restoreYamlSource(redacted.text, redacted.originals)).toBe(yaml);
  });

  it("redacts and restores every row of a large data table", () => {
    const rows = Array.from({ length: 2000 }, (_, i) => `      - { user: u${i}, password: pw-${i} }`).join("\n");
    const big = `${yaml}  data:\n    rows:\n${rows}\n`;
    const parsed = parsePlanDocument(big);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const redacted = redactYamlSource(big, parsed.plan)!;
    expect(redacted.originals).toHaveLength(2002); // the header, the passcode (its alias is the same scalar), every row;
    expect(redacted.text).not.toMatch(/pw-\d/);
    expect(restoreYamlSource(redacted.text, redacted.originals)).toBe(big);
  });
});

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planSchema, type PlanInput } from "@volley/contracts";
import { importArtillery } from "./import-artillery";

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, "../fixtures/artillery", name), "utf8");
const users = fixture("users.csv");

const valid = (plan: PlanInput) => {
  const r = planSchema.safeParse(plan);
  expect(r.success, r.success ? "" : JSON.stringify(r.error.issues)).toBe(true);
  return r.success ? r.data : undefined!;
};

describe("importArtillery: the socketio chat script", () => {
  it("maps login, join with its response, the loop's emits, payload and phases, as users step for step", () => {
    const { plan, notes } = importArtillery(fixture("socketio-chat.yml"), { files: { "users.csv": users } });
    const p = valid(plan);
    expect(plan.target).toEqual({ url: "http://localhost:3000", protocol: "socketio", socketio: { transports: ["websocket"] } });
    // fields name the columns; skipHeader drops the file's own header line.
    expect(plan.flow!.data).toEqual({ csv: "username,password\nann,secret1\nbob,secret2\ncid,secret3", reuse: true });
    expect(plan.flow!.steps).toEqual([
      {
        request: {
          name: "login",
          method: "POST",
          url: "/login",
          json: { user: "{{ data.username }}", password: "{{ data.password }}" },
          capture: { token: "$.token" },
        },
      },
      { connect: { headers: { "x-client": "artillery" } } },
      {
        send: {
          name: "join",
          event: "join",
          json: { room: "lobby", token: "{{ vars.token }}" },
          reply: { event: "joined" },
          capture: { members: "$.members" },
        },
      },
      { think: "1s" },
      {
        loop: {
          count: 20,
          steps: [
            {
              send: {
                name: "chat",
                event: "chat",
                json: { room: "lobby", text: "message {{ msg.seq }} from {{ data.username }}" },
                reply: { event: "message", match: { path: "$.user", equals: "{{ data.username }}" } },
              },
            },
            { think: "2s" },
          ],
        },
      },
    ]);
    // 2/s for 10 s, then 2 → 10/s over 30 s: the phases exactly, as a stage line.
    expect(p.scenario).toMatchObject({
      kind: "users",
      arrivalRate: 2,
      duration: "40s",
      stages: [
        { duration: "10s", target: 2 },
        { duration: "30s", target: 10 },
      ],
    });
    const text = notes.join("\n");
    expect(text).toMatch(/"function" has no Volley equivalent/);
    expect(text).toMatch(/users arrive at 2\/s, then along 2 stages/);
  });

  it("without the payload file: a placeholder row and a note saying how to pass it", () => {
    const { plan, notes } = importArtillery(fixture("socketio-chat.yml"));
    valid(plan);
    expect(plan.flow!.data).toEqual({ rows: [{ username: "<username>", password: "<password>" }], reuse: true });
    expect(notes.join("\n")).toMatch(/payload file users\.csv was not given: .*--payload users\.csv=<path>/);
  });
});

describe("importArtillery: the ws script", () => {
  it("a single phase imports as users, step for step: each user sends what an Artillery user sends, then leaves", () => {
    const { plan, notes } = importArtillery(fixture("ws-ticker.yml"));
    const p = valid(plan);
    expect(plan.target).toEqual({ url: "ws://localhost:8080/ws", protocol: "ws", ws: { subprotocols: ["json.v1"] } });
    // 5 users a second for 20 s: 100 users, every one of them may be on at once.
    expect(p.connections).toMatchObject({ count: 100 });
    expect(p.scenario).toMatchObject({ kind: "users", arrivalRate: 5, duration: "20s" });
    expect(plan.flow!.steps).toEqual([
      { connect: {} },
      { send: { name: "subscribe", json: { type: "subscribe", topic: "{{ random.pick(prices, news) }}" } } },
      { think: "1s" },
      {
        loop: {
          count: 60,
          steps: [
            // A send with match waits for its reply; one without awaits none, as Artillery's ws engine.
            {
              send: { name: "ping", json: { type: "ping", id: "{{ random.hex }}", n: "{{ msg.seq }}" }, reply: { match: { path: "$.type", equals: "pong" } } },
            },
            { send: { name: "send", text: "heartbeat {{ msg.seq }}" } },
            { think: "500ms" },
          ],
        },
      },
    ]);
    expect(notes.join("\n")).toMatch(/config\.variables\.topic lists 2 values/);
    expect(notes.join("\n")).toMatch(/users arrive at 5\/s for 20s/);
  });
});

describe("importArtillery: the emit list form with acknowledgements", () => {
  it("acks become acknowledged sends with their captures; what cannot map is named", () => {
    const { plan, notes } = importArtillery(fixture("socketio-v3-emit-list.yml"));
    const p = valid(plan);
    expect(plan.target).toEqual({ url: "https://chat.example.com", protocol: "socketio", socketio: { path: "/realtime" } });
    expect(p.scenario).toMatchObject({ kind: "users", arrivalRate: 0.5, duration: "60s" });
    expect(plan.flow!.steps).toEqual([
      { connect: { query: { apiKey: "<$processEnvironment.API_KEY>" } } },
      { send: { name: "hello", event: "hello", json: { name: "bot-{{ random.int(1, 1000) }}" }, ack: true, capture: { session: "$.session" } } },
      {
        loop: {
          count: 10,
          steps: [
            { send: { name: "typing", event: "typing", json: { session: "{{ vars.session }}" } } },
            { send: { name: "say", event: "say", json: { session: "{{ vars.session }}", text: "hi #{{ msg.seq }}" }, ack: true } },
            { think: "3s" },
          ],
        },
      },
    ]);
    const text = notes.join("\n");
    expect(text).toMatch(/config\.socketio: \{\{ \$processEnvironment\.API_KEY \}\} has no Volley equivalent/);
    expect(text).toMatch(/loop\[3\]: "function" has no Volley equivalent/);
  });

  it("several scenarios become a weighted choice; a step-level namespace goes to the URL; a before with no request is named", () => {
    const { plan, notes } = importArtillery(
      "config: { target: 'http://127.0.0.1:3000', phases: [{ duration: 10, arrivalRate: 2 }] }\nbefore:\n  flow: [{ log: hi }]\nscenarios:\n  - engine: socketio\n    weight: 3\n    flow:\n      - namespace: /nsp1\n      - emit: { channel: echo, data: hello }\n  - engine: socketio\n    weight: 1\n    flow:\n      - get: { url: /health }\n",
    );
    valid(plan);
    expect(plan.target.url).toBe("http://127.0.0.1:3000/nsp1");
    expect(plan.flow!.steps).toEqual([
      {
        choice: [
          { weight: 3, steps: [{ connect: {} }, { send: { name: "echo", event: "echo", json: "hello" } }] },
          { weight: 1, steps: [{ request: expect.objectContaining({ method: "GET", url: "/health" }) }] },
        ],
      },
    ]);
    expect(notes.join("\n")).toMatch(/before\.flow\[0\]: "log" in before has no Volley equivalent \(only HTTP requests run once around the users\); left out/);
  });
});

describe("Artillery's own examples, unchanged (fixtures/artillery/examples)", () => {
  const example = (name: string) => importArtillery(fixture(`examples/${name}`));

  it("websockets/test.yml: two scenarios as a weighted choice, one send per user as Artillery sends", () => {
    const { plan, notes } = example("websockets-test.yml");
    const p = valid(plan);
    expect(p.scenario).toMatchObject({ kind: "users", arrivalRate: 25, duration: "60s" });
    expect(plan.flow!.steps).toEqual([
      {
        choice: [
          { weight: 1, steps: [{ connect: {} }, { send: { name: "send", text: "Artillery" } }] },
          { weight: 1, steps: [{ connect: {} }, { send: { name: "send-2", text: "<data>" } }] },
        ],
      },
    ]);
    const text = notes.join("\n");
    expect(text).toMatch(/scenarios\[1\]\.flow\[0\]: "function" has no Volley equivalent/);
    expect(text).toMatch(/\{\{ data \}\} has no Volley equivalent/);
    expect(text).not.toMatch(/imported the first/);
  });

  it("socket-io/socket-io.yml: the step-level namespace goes to the URL, the emit with its response or ack stays", () => {
    const { plan, notes } = example("socket-io.yml");
    valid(plan);
    expect(plan.target.url).toBe("http://localhost:8080/personalised");
    expect(plan.flow!.steps).toEqual([
      {
        choice: [
          {
            weight: 1,
            steps: [
              { connect: {} },
              {
                send: {
                  name: "echo",
                  event: "echo",
                  json: "Hello from Artillery",
                  reply: { event: "echoResponse", match: { path: "$", equals: "Hello from Artillery" } },
                },
              },
            ],
          },
          { weight: 1, steps: [{ connect: {} }, { send: { name: "userDetails", event: "userDetails", json: {}, ack: true } }] },
        ],
      },
    ]);
    expect(notes.join("\n")).toMatch(/acknowledgement's match \(\$\.0\.name = Artillery\) is not compared/);
  });

  it("http-socketio-server/http-socket.yml: requests with captures, a captured object's field, the emit; before/after named", () => {
    const { plan, notes } = example("http-socket.yml");
    const p = valid(plan);
    expect(p.scenario).toMatchObject({ kind: "users", arrivalRate: 5, duration: "30s" });
    expect(plan.flow!.steps).toEqual([
      { request: { name: "movies", method: "GET", url: "/movies", capture: { chosenMovie: { json: "$", pick: "random" } } } },
      { request: { name: "movies-2", method: "GET", url: "/movies/{{ vars.chosenMovie.id }}", capture: { chosenMovieTitle: "$.title" } } },
      { connect: {} },
      {
        send: {
          name: "echo",
          event: "echo",
          json: "{{ vars.chosenMovieTitle }}",
          reply: { event: "echoResponse", match: { path: "$", equals: "{{ vars.chosenMovieTitle }}" } },
        },
      },
    ]);
    const text = notes.join("\n");
    // before/after: once around the users (per agent shard), as flow.before and flow.after.
    expect(plan.flow!.before).toEqual([
      { request: { name: "login", method: "POST", url: "/login", json: { username: "doesnt", password: "matter" }, expect: { status: "any" } } },
    ]);
    expect(plan.flow!.after).toEqual([{ request: { name: "logout", method: "POST", url: "/logout", expect: { status: "any" } } }]);
    expect(text).toMatch(/before: its 1 request\(s\) became flow\.before, made once per agent shard before the first user arrives/);
    expect(text).toMatch(/after: its 1 request\(s\) became flow\.after/);
    expect(text).toMatch(
      /capture chosenMovie reads \$\[\{\{ \$randomNumber\(1, 150\) \}\}\], an item at an index drawn per user: it captures one item of the list at \$ drawn at random \(pick: random\)/,
    );
    expect(text).not.toMatch(/response data is not compared/);
  });
});

describe("importArtillery: errors", () => {
  it("names what is missing", () => {
    expect(() => importArtillery("a: [")).toThrow(/^not an Artillery script: not valid YAML/);
    expect(() => importArtillery("scenarios: []")).toThrow(/config is missing/);
    expect(() => importArtillery("config: { target: 'http://x' }\n")).toThrow(/scenarios is missing/);
    expect(() => importArtillery("config: { target: 'http://x' }\nscenarios: [{ flow: [{ get: { url: / } }] }]")).toThrow(
      /uses the http engine: only engine: ws and engine: socketio/,
    );
    expect(() => importArtillery("config: { target: 'ws://x' }\nscenarios: [{ engine: ws, flow: [{ think: 1 }] }]")).toThrow(/neither emits nor sends/);
  });

  it("asked for connections (--connections), a flow without a loop: its last emit is the message kind", () => {
    const { plan, notes } = importArtillery(
      "config: { target: 'http://127.0.0.1:3000', phases: [{ duration: 5, arrivalRate: 1 }] }\nscenarios:\n  - engine: socketio\n    flow:\n      - emit: { channel: join, data: { room: r } }\n      - emit: { channel: chat, data: { text: hi }, response: { channel: message } }\n",
      { connections: 5 },
    );
    valid(plan);
    expect(plan.flow!.setup).toEqual([{ send: { name: "join", event: "join", json: { room: "r" } } }]);
    expect(plan.flow!.messages).toEqual([{ name: "chat", event: "chat", json: { text: "hi" }, reply: { event: "message" } }]);
    expect(notes.join("\n")).toMatch(/no loop/);
  });
});

describe("importArtillery: malformed steps", () => {
  it("names a loop that is not a list and a think that is not seconds", () => {
    const head = "config: { target: 'ws://127.0.0.1:1' }\nscenarios:\n  - engine: ws\n    flow:\n";
    expect(() => importArtillery(`${head}      - loop: 5\n`)).toThrow("flow[0].loop must be a list of steps");
    expect(() => importArtillery(`${head}      - think: soon\n      - send: hi\n`)).toThrow(
      'flow[0]: think takes seconds, like think: 1 or think: 0.5 (got "soon")',
    );
  });
});

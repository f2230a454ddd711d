/**
 * The built-in templates: the benchmarks this field is known by, as plans a user can rerun against
 * their own server in one click. Each points at the matching reference server that `npm start`
 * runs (apps/targets: ws 9001, Socket.IO 9002, SockJS 9003, STOMP 9004, HTTP 9005, HTTP under
 * node:cluster 9007, the aedes MQTT broker 9017), and each parses with the plan schema (templates.test.ts proves it); each,
 * scaled down, runs against its reference server (apps/agent templates-run.test.ts proves it).
 *
 * As shipped each is sized for what `npm start` runs: one local agent on a small (2-core) machine
 * beside the targets, hub and web, finishing in about a minute, and passes there
 * (e2e first-hour.test.ts runs every one from the UI). A comment in each says how to scale it to the
 * benchmark's full size with more agents (`agents.count`; Agents → Add agent).
 */
export interface PlanTemplate {
  id:
    | "broadcast-sweep"
    | "ping-throughput"
    | "concurrency-storm"
    | "group-location"
    | "http-rps"
    | "capacity-search"
    | "app-flow"
    | "virtual-users"
    | "mqtt-fanout";
  title: string;
  description: string;
  /** The plan, as YAML with comments. */
  yaml: string;
}

export const TEMPLATES: readonly PlanTemplate[] = [
  {
    id: "broadcast-sweep",
    title: "Broadcast sweep (SockJS/Socket.IO 2011)",
    description:
      "One room, every message to everyone. The aggregate send rate starts at 1/s and rises by max(1, 1000/C) per 3 s step with 1 s gaps, so deliveries grow by about 1000/s per step; each client times its own echo and every delivery. A level ends when an echo exceeds 5 s, a connection drops, or p95 passes 200 ms. Chart: latency vs deliveries/s.",
    yaml: `name: broadcast sweep — 100 clients in one room
target:
  url: http://127.0.0.1:9003/broadcast     # the SockJS reference room server
  protocol: sockjs
  sockjs: { transports: [websocket] }
connections: { count: 100, rate: 100 }       # rerun with 25, 50, 100, 500, 1000, 2000
scenario:
  kind: broadcast
  room: volley
  echo: true                                 # the server sends each message back to its sender too
  message: { bytes: 64, rate: 1, per: aggregate, timeout: 10s }
  duration: 2m                               # the longest the sweep may step
sweep:
  from: 1                                    # client-sent messages/s, all clients together
  step: 10                                   # max(1, 1000 / count): ~1000 more deliveries/s per step
  hold: 3s
  gap: 1s
  steps: 10                                  # up to ~10,000 deliveries/s: what one local agent receives
  stopWhen: { max: 5s, p95: 200ms, disconnects: 0 }
# Full size (the 2011 benchmark): steps: 100 and count up to 2000 need more agents: every client
# receives every message, so deliveries/s = sent/s × count. Add agents and set agents.count.
thresholds: [ "delivery.ratio > 99%" ]       # the sweep finds where latency breaks; nothing may be lost on the way
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "ping-throughput",
    title: "Ping throughput (SocketCluster 2014)",
    description:
      "One new client per second, each emitting `ping` at a constant rate; the server answers `pong {count}` through the acknowledgement. Round-trip latency and the pings per second the server keeps up with. Shipped at 20 clients × 200 pings/s (4,000/s) for one local agent; the 2014 benchmark's full size is 100 clients × 1,700 pings/s (170,000/s), which needs several agents.",
    yaml: `name: ping throughput — 20 clients × 200 pings/s
target:
  url: http://127.0.0.1:9002/ping            # the Socket.IO reference ping server (namespace /ping)
  protocol: socketio
  socketio: { transports: [websocket], event: ping, ack: true }
connections: { count: 20, rate: 1 }          # one new client per second
scenario:
  kind: echo
  message: { bytes: 64, rate: 200, per: connection, arrival: constant, timeout: 10s }
  duration: 20s                              # each client pings for 20 s after it connects
# Full size (SocketCluster 2014): count: 100 and rate: 1700 — 170,000 pings/s. One agent core
# drives roughly 20,000 Socket.IO round trips/s (bench/RESULTS.md), so give it about 10 agents
# (agents.count: 10) and a server on its own machine.
thresholds: [ "latency.p99 < 1s", "messages.loss_rate < 1%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "concurrency-storm",
    title: "Concurrency storm (SocketCluster 2014)",
    description:
      "Connect clients at 160 a second and hold; each pings every ~6 s and a canary client pings every second. Reports connect times, round trips, the canary's latency and drops. Shipped at 2,000 clients for one local agent; the 2014 benchmark's full size is 42,000 clients on 4 agents. The raw WebSocket ping server (`/ping`) answers each ping with the ping itself: raw WebSocket has no acknowledgement to carry a `{count}` beside the message, and each reply is matched by the message's own bytes (over Socket.IO, `http://127.0.0.1:9002/ping` with `socketio: { event: ping, ack: true }` answers `{count}` as in ping-throughput).",
    yaml: `name: concurrency storm — 2,000 clients
target:
  url: ws://127.0.0.1:9001/ping              # the raw WebSocket reference ping server (pong = the ping, unchanged)
  protocol: ws
connections: { count: 2000, rate: 160 }       # ~12.5 s of ramp
scenario:
  kind: storm
  message: { bytes: 64, rate: 0.1667, per: connection, timeout: 10s }   # one ping every ~6 s
  canary: { rate: 1 }                        # one extra client, timed apart
  duration: 30s                              # each client holds (and pings) for 30 s after connecting
# Full size (SocketCluster 2014): count: 42000, duration: 60s, agents.count: 4 — each agent holds
# about 10,000 connections (AGENT_MAX_CONNECTIONS; past ~60,000 per agent give it source addresses).
thresholds: [ "connect.p95 < 1s", "canary.p99 < 500ms", "connections.failed == 0" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "group-location",
    title: "Group location sharing",
    description:
      "Stages 20 s → 300, 30 s → 300, 10 s → 0; fixed groups of 4; every member shares its position every 3 s with the other three. Delivery latency and delivery ratio. To compare transports side by side, rerun with another protocol and its reference server: sse at http://127.0.0.1:9005/sse, long-polling or short-polling at http://127.0.0.1:9005/poll, stomp at ws://127.0.0.1:9004/stomp, socketio at http://127.0.0.1:9002, sockjs at http://127.0.0.1:9003/echo.",
    yaml: `name: group location — groups of 4 over WebSocket
target:
  url: ws://127.0.0.1:9001/group             # the raw WebSocket reference group server (?room= is the group)
  protocol: ws
connections:
  count: 300
  stages:
    - { duration: 20s, target: 300 }
    - { duration: 30s, target: 300 }
    - { duration: 10s, target: 0 }
scenario:
  kind: groups
  size: 4
  message: { bytes: 64, rate: 0.3333, per: connection, timeout: 10s }   # one position every 3 s
  duration: 60s                              # a member shares while connected, at most this long
# Larger: raise count and the middle stage's target (one agent holds thousands of these members);
# past one machine, add agents (agents.count) — groups never span agents, so ratios stay exact.
thresholds: [ "delivery.p95 < 200ms", "delivery.ratio > 99%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "http-rps",
    title: "HTTP requests per second",
    description:
      "Plain HTTP requests at an open (Poisson) arrival rate over keep-alive connections, stepped up until the server fails: latency and requests per second, as the socket-server and Node cluster comparisons measured. Rerun against http://127.0.0.1:9007/echo, the same server run by node:cluster workers (HTTP_CLUSTER_WORKERS, one per CPU by default), to compare one process with a cluster.",
    yaml: `name: http rps — stepped up to 3,000/s
target:
  url: http://127.0.0.1:9005/echo            # the HTTP reference echo, one process (9007: the node:cluster one)
  protocol: http
  http: { method: POST }
connections: { count: 50, rate: 50 }
scenario:
  kind: http-rps
  message: { bytes: 64, rate: 300, per: aggregate, arrival: poisson, timeout: 5s }
  duration: 2m
sweep:
  step: 300                                  # requests/s added per step, from message.rate
  hold: 3s
  gap: 1s
  steps: 10                                  # up to 3,000 requests/s: what one local agent sends
  stopWhen: { p99: 1s, errorRate: 1 }
# Until failure: steps: 40 and step: 500 go to 20,000 requests/s; put the agent (or several, with
# agents.count) on a machine apart from the server so the server, not the agent, is what breaks.
thresholds: [ "errors.rate < 1%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "capacity-search",
    title: "Capacity search",
    description:
      "Steps the message rate until the SLO (p95 ≤ 200 ms) breaks and reports the highest rate that held: one number to put in a README. Works with any scenario; this one is the WebSocket echo.",
    yaml: `name: capacity search — ws echo, p95 ≤ 200 ms
target:
  url: ws://127.0.0.1:9001/echo              # the raw WebSocket reference echo
  protocol: ws
connections: { count: 100, rate: 100 }
scenario:
  kind: echo
  message: { bytes: 64, rate: 1000, per: aggregate, timeout: 10s }
  duration: 2m
sweep:
  step: 1000
  hold: 3s
  gap: 1s
  steps: 10                                  # up to 10,000 messages/s: what one local agent drives
  stopWhen: { p95: 200ms }
# A server faster than one agent: more steps (steps: 100) and more agents (agents.count), so the
# capacity found is the server's, not the agent's (a saturated agent is flagged on every step).
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "app-flow",
    title: "Your app's own messages (flow)",
    description:
      "Drives a server the way your application talks to it instead of Volley's opaque echo: JSON events built from a template, each reply recognised by a field the server copies back (clientMsgId), every message still timed from its intended send time. Points at the Socket.IO reference server, which answers every event on the same event; the comments show the setup steps a real app needs (log in over HTTP, the token in the handshake auth, join a room by its own event) and how to time server push.",
    yaml: `name: app flow — JSON chat events matched by clientMsgId
target:
  url: http://127.0.0.1:9002                 # your Socket.IO app (version: 2, 3 or 4)
  protocol: socketio
  socketio: { transports: [websocket] }
connections: { count: 20, rate: 20 }
scenario:
  kind: echo                                 # broadcast: every member's copy is timed as a delivery
  message: { rate: 5, timeout: 10s }         # per connection; rate, arrival and sweeps work as always
  duration: 20s
flow:
  # Steps each connection takes before it sends (timed as setup.<name>, failures as errors.setup.<name>):
  # setup:
  #   - request: { name: login, method: POST, url: /login, json: { user: "user{{ conn.index }}" }, capture: { token: "$.token" } }
  #   - connect: { auth: { token: "{{ vars.token }}" } }
  #   - send: { name: join, event: join, json: { room: lobby } }
  #   - waitFor: { name: joined, event: joined, timeout: 5s }
  messages:
    - name: chat
      event: chat
      json: { room: lobby, text: "hello #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" }
      reply: { event: chat, match: { path: $.clientMsgId, equals: "{{ msg.id }}" } }
  # Server push timed by the server's own stamp: push: [{ event: message, timestamp: $.ts }]
thresholds: [ "latency.p95 < 200ms", "messages.unmatched < 1" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "virtual-users",
    title: "Virtual users: arrive, chat, leave",
    description:
      "Users instead of connections, as Artillery, k6 and Locust run them: users arrive at a rate that ramps up, each connects, sends a few JSON messages with think times between them (each waiting for its own reply, matched by id) and leaves. Every step is timed from its intended instant; the run reports users started, completed, failed and dropped, and each step's time. Points at the raw WebSocket reference server; the comments show log-in, captures, loops, choices and reconnects.",
    yaml: `name: virtual users — arrive, chat a little, leave
target: { url: ws://127.0.0.1:9001/echo, protocol: ws }
connections: { count: 200 }                  # the most users at once (further arrivals: users.dropped)
scenario:
  kind: users
  arrivalRate: 1                             # users per second at the start ...
  stages: [ { duration: 10s, target: 4 } ]   # ... ramping to 4/s, then held until duration
  duration: 20s                              # users arrive for 20 s; the last ones finish their steps after
  arrival: poisson
flow:
  steps:
    # A real app: log in first and connect with the token (timed as step.login):
    # - request: { name: login, method: POST, url: /login, json: { user: "user{{ conn.index }}" }, capture: { token: $.token } }
    # - connect: { query: { token: "{{ vars.token }}" }, reconnect: { policy: backoff, maxAttempts: 5 } }
    - connect: { reconnect: { policy: backoff } }
    - loop:
        count: 5
        steps:
          - send:
              name: chat                     # timed as step.chat, from its intended instant to its reply
              json: { id: "{{ msg.id }}", text: "hello #{{ msg.seq }}", mood: "{{ random.pick(happy, busy) }}" }
              reply: { match: { path: $.id, equals: "{{ msg.id }}" } }
          - think: { min: 300ms, max: 900ms }
    # Branch like a user: - choice: [ { weight: 3, steps: [...] }, { weight: 1, steps: [] } ]
    - disconnect: true
thresholds: [ "user_time.p95 < 10s", "users.failed_rate < 1%", "latency.p95 < 200ms" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "mqtt-fanout",
    title: "MQTT fan-out: one room topic",
    description:
      "MQTT 3.1.1 over WebSocket: 50 clients subscribe to one room topic and publish on it, 20 messages/s among them, and the broker fans every message out to all 50 subscribers (1,000 deliveries/s). Each publisher times its own copy back from the broker as a round trip, each other subscriber every delivery: delivery latency and ratio, as the MQTT broker benchmarks measure fan-out. Points at the aedes broker `npm start` runs at ws://127.0.0.1:9017/mqtt (its own counts at http://127.0.0.1:9017/stats); rerun against your broker's WebSocket listener (mosquitto, EMQX, HiveMQ, RabbitMQ Web-MQTT).",
    yaml: `name: mqtt fan-out — 50 subscribers on one room topic
target:
  url: ws://127.0.0.1:9017/mqtt              # the MQTT reference broker (aedes), MQTT over WebSocket
  protocol: mqtt
  mqtt: { version: "3.1.1", qos: 0, roomTopic: "chat/rooms/{{ conn.room }}" }   # qos: 1 or 2 adds PUBACKs (mqtt.acked)
connections: { count: 50, rate: 50 }
scenario:
  kind: broadcast
  room: lobby                                # every client subscribes to chat/rooms/lobby and publishes there
  echo: true                                 # MQTT hands the publisher its own copy too: timed as its round trip
  message: { bytes: 64, rate: 20, per: aggregate, timeout: 10s }   # 20 publishes/s among all 50: 1,000 deliveries/s
  duration: 30s
# Larger: deliveries/s = publishes/s × subscribers. Raise count or rate; when the run flags the agent
# saturated, add agents (agents.count): every agent's clients join the same topic.
thresholds: [ "delivery.p95 < 200ms", "delivery.ratio > 99%" ]
agents: { pool: default, count: 1 }
`,
  },
];

import { parse as parseCsv } from "csv-parse/sync";
import type { z } from "zod";
import { durationMs } from "./duration";
import { userConditionSchema, userStepPosition, type Flow, type FlowData, type FlowMessage, type SetupStep, type UserCondition, type UserStep } from "./flow";
import { flowAbsoluteUrls, literalHost } from "./flow-hosts";
import { templateNames, templateStrings } from "./flow-template";
import { checkFlowCodecs } from "./flow-validation-codec";
import { checkMqttFlow } from "./flow-validation-mqtt";
import { checkSocketclusterFlow } from "./flow-validation-socketcluster";
import { checkStompFlow } from "./flow-validation-stomp";
import { parseJsonPath } from "./json-path";
import { defaultConnectionName, stepConnectionName, userConnections } from "./user-connections";
import { SOCKETIO_V2_RESERVED_EVENTS, socketioV2ReservedProblem, type Protocol, type Target } from "./target";

type Ctx = z.RefinementCtx;
type Path = (string | number)[];

const SOCKETIO_V2_RESERVED = SOCKETIO_V2_RESERVED_EVENTS;
/** Socket.IO 3 and 4 reserve fewer, and refuse them on emit. */
const SOCKETIO_RESERVED = new Set(["connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener"]);

const EVENT_PROTOCOLS: readonly Protocol[] = ["socketio", "socketcluster", "stomp", "mqtt"];
const REQUEST_PROTOCOLS: readonly Protocol[] = ["sse", "long-polling", "short-polling", "http"];
const ACK_PROTOCOLS: readonly Protocol[] = ["socketio", "socketcluster"];

/** The rows of flow.data, from `rows` or parsed from `csv` (header line, then one row per line). */
export function flowRows(data: FlowData | undefined): Record<string, unknown>[] {
  if (!data) return [];
  if (data.rows) return data.rows;
  if (data.csv === undefined) return [];
  return parseCsv(data.csv, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, unknown>[];
}

/** The plan fields the flow is checked against. */
export interface FlowPlanView {
  target: Target;
  scenarioKind: string;
  /** The most connections that may be open (count; the canary has no row). */
  connections: number;
}

/**
 * Checks what the schema cannot: every variable known and made before it is used, JSON paths that
 * can match, options that fit the target's protocol and the scenario. Issues name the field (path
 * under `flow`) and the fix.
 */
export function validateFlow(flow: Flow, plan: FlowPlanView, ctx: Ctx): void {
  const issue = (path: Path, message: string) => ctx.addIssue({ code: "custom", path: ["flow", ...path], message });
  // The target policy checks every host a run reaches before it runs: a host made by a template could be anything.
  for (const { field, url } of flowAbsoluteUrls({ target: plan.target, flow })) {
    if (literalHost(url) === null) {
      const path = field
        .replace(/^plan\./, "")
        .split(".")
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
      ctx.addIssue({
        code: "custom",
        path,
        message:
          "the URL's host must be written out (templates may follow it, in the path and query): the target policy checks every host before the run; or use a URL relative to target.url",
      });
    }
  }
  // Not const: a user's step is checked against the protocol of the connection it uses (user-connections.ts).
  let protocol = plan.target.protocol;
  const columns = dataColumns(flow, plan, issue);
  const made = new Set<string>();
  const templates = (value: unknown, path: Path, allowMsg: boolean) => {
    for (const s of templateStrings(value)) {
      const { names, problems } = templateNames(s.text);
      const at = [...path, ...s.path];
      for (const p of problems) issue(at, p);
      for (const n of names) {
        if (n.startsWith("msg.") && !allowMsg)
          issue(at, `{{ ${n} }} only exists in flow.messages and a user's sends (a message's id and counter); use conn.index or a capture here`);
        if (n.startsWith("vars.") && !made.has(n.slice(5).split(".")[0]!)) {
          issue(at, `{{ ${n} }} is not captured before this point: add capture: { ${n.slice(5)}: "$.…" } to an earlier setup step`);
        }
        if (n.startsWith("data.")) {
          if (!columns) issue(at, `{{ ${n} }} needs flow.data: add data: { rows: [...] } or data: { csv: "..." }`);
          else if (!columns.has(n.slice(5))) issue(at, `flow.data has no column "${n.slice(5)}" (it has ${[...columns].join(", ") || "none"})`);
        }
      }
    }
  };
  const paths = (capture: Record<string, unknown> | undefined, path: Path) => {
    for (const [key, source] of Object.entries(capture ?? {})) {
      const jsonPath = typeof source === "string" ? source : (source as { json?: string }).json;
      if (jsonPath !== undefined) checkPath(jsonPath, [...path, key], issue);
    }
  };
  /** `incoming`: an event received (a reply, a waitFor), which on SSE is the event type. */
  const event = (value: string | undefined, path: Path, incoming = false) => {
    if (value === undefined) return;
    if (value.includes("{{")) {
      // An incoming destination is subscribed when the connection opens: no msg.*, and only where the driver subscribes by name.
      if (incoming && protocol !== "stomp" && protocol !== "mqtt")
        issue(
          path,
          `only STOMP destinations and MQTT topics may be templates where messages arrive (this target is ${protocol}): name the event as the server sends it`,
        );
      templates(value, path, !incoming && path[0] === "messages");
    }
    if (incoming && protocol === "sse") return;
    if (!EVENT_PROTOCOLS.includes(protocol)) {
      issue(path, `protocol ${protocol} has no events or destinations: remove event (Socket.IO, SocketCluster, STOMP and MQTT use it)`);
      return;
    }
    if (protocol === "stomp" && !value.startsWith("/")) issue(path, `a STOMP destination starts with /, like /topic/chat`);
    if (protocol === "socketio") {
      const v2 = (plan.target.socketio?.version ?? 4) === 2;
      const reserved = v2 ? SOCKETIO_V2_RESERVED : SOCKETIO_RESERVED;
      if (reserved.has(value))
        issue(
          path,
          v2
            ? socketioV2ReservedProblem(value)
            : `"${value}" is reserved by the Socket.IO 3/4 client and never reaches the server: rename the server's event (like "${value}-msg")`,
        );
    }
  };
  const body = (step: { json?: unknown; text?: string; args?: unknown[]; headers?: unknown; qos?: number }, path: Path) => {
    if (step.json !== undefined && step.text !== undefined) issue([...path, "text"], "give json or text, not both");
    if (step.qos !== undefined && protocol !== "mqtt") issue([...path, "qos"], `qos is MQTT's (this target is ${protocol}): remove it`);
    if (step.args !== undefined && protocol !== "socketio")
      issue([...path, "args"], `only Socket.IO events take several arguments (this target is ${protocol}): put them in json`);
    if (step.headers !== undefined && protocol !== "stomp")
      issue([...path, "headers"], `frame headers are for STOMP (this target is ${protocol}); HTTP headers go in a request`);
  };

  // Once per shard, before the users and after them: requests only, with no user's row, index or message.
  const hook = (which: "before" | "after") =>
    flow[which]?.forEach((step, i) => {
      const at: Path = [which, i, "request"];
      if (plan.scenarioKind !== "users") {
        if (i === 0) issue([which], `runs once per shard around the users: set scenario.kind: users, or make the requests setup steps of each connection`);
        return;
      }
      for (const s of templateStrings({ url: step.request.url, headers: step.request.headers, json: step.request.json, body: step.request.body }))
        for (const n of templateNames(s.text).names)
          if (n.startsWith("data.") || n.startsWith("msg.") || n === "conn.index" || n === "conn.room")
            issue(
              [...at, ...s.path],
              `{{ ${n} }} belongs to a user, and ${which} runs once for all of them: use a literal or a capture of an earlier ${which} request`,
            );
      templates({ url: step.request.url, headers: step.request.headers, json: step.request.json, body: step.request.body }, at, true);
      if (step.request.json !== undefined && step.request.body !== undefined) issue([...at, "body"], "give json or body, not both");
      paths(step.request.capture, [...at, "capture"]);
      addCaptures(step.request.capture, made);
    });
  // before's captures are every user's from its arrival; after reads them and what it captures itself.
  hook("before");
  const beforeMade = new Set(made);
  hook("after");
  made.clear();
  for (const k of beforeMade) made.add(k);

  let connected = false;
  flow.setup.forEach((step, i) => {
    const at: Path = ["setup", i];
    const kind = Object.keys(step)[0] as keyof SetupStep;
    if ("request" in step) {
      templates({ url: step.request.url, headers: step.request.headers, json: step.request.json, body: step.request.body }, [...at, "request"], false);
      if (step.request.json !== undefined && step.request.body !== undefined) issue([...at, "request", "body"], "give json or body, not both");
      paths(step.request.capture, [...at, "request", "capture"]);
      addCaptures(step.request.capture, made);
    } else if ("connect" in step) {
      if (connected) issue(at, "a connection connects once: remove the second connect step");
      connected = true;
      templates({ headers: step.connect.headers, query: step.connect.query, auth: step.connect.auth }, [...at, "connect"], false);
      if (step.connect.auth !== undefined && protocol !== "socketio")
        issue([...at, "connect", "auth"], `auth is Socket.IO's handshake payload (this target is ${protocol}): use headers or query`);
      else if (step.connect.auth !== undefined && plan.target.socketio?.version === 2)
        issue(
          [...at, "connect", "auth"],
          'Socket.IO 2 has no handshake auth payload: send the token in query (like query: { token: "{{ vars.token }}" }) or a header',
        );
    } else if ("send" in step || "waitFor" in step) {
      // Steps on the connection before an explicit connect step would have nothing to use.
      if (!connected && flow.setup.some((s) => "connect" in s)) issue(at, `${kind} needs the connection: move it after the connect step`);
      connected = true;
      if ("send" in step) {
        event(step.send.event, [...at, "send", "event"]);
        body(step.send, [...at, "send"]);
        templates({ json: step.send.json, text: step.send.text, args: step.send.args, headers: step.send.headers }, [...at, "send"], false);
        if (step.send.ack && !ACK_PROTOCOLS.includes(protocol))
          issue([...at, "send", "ack"], `only Socket.IO and SocketCluster acknowledge (this target is ${protocol}): use a waitFor step`);
        if (step.send.capture && !step.send.ack)
          issue([...at, "send", "capture"], "a send captures from its acknowledgement: set ack: true, or capture in a waitFor step");
        paths(step.send.capture, [...at, "send", "capture"]);
        addCaptures(step.send.capture, made);
      } else {
        event(step.waitFor.event, [...at, "waitFor", "event"], true);
        if (step.waitFor.match) {
          checkPath(step.waitFor.match.path, [...at, "waitFor", "match", "path"], issue);
          templates(step.waitFor.match.equals, [...at, "waitFor", "match", "equals"], false);
        }
        paths(step.waitFor.capture, [...at, "waitFor", "capture"]);
        addCaptures(step.waitFor.capture, made);
      }
    }
  });

  flow.messages?.forEach((m, i) => {
    checkMessage(m, ["messages", i]);
  });
  // A user's steps: the same checks, in document order (a capture inside a branch counts from there on).
  let userConnected = false;
  /** A condition's own checks: its data column, one comparison, a regular expression that compiles. */
  const condition = (c: UserCondition, at: Path) => {
    const v = c.var;
    if (v.startsWith("data.") && !columns?.has(v.slice(5))) issue([...at, "var"], `flow.data has no column "${v.slice(5)}"`);
    const given = CONDITION_COMPARISONS.filter((k) => c[k] !== undefined);
    if (given.length > 1)
      issue([...at, given[1]!], `a condition makes one comparison (this one has ${given.join(" and ")}): keep one, and nest an if for the other`);
    if (c.matches !== undefined) {
      try {
        new RegExp(c.matches);
      } catch (err) {
        issue([...at, "matches"], `is not a regular expression (${(err as Error).message}): write it in JavaScript syntax, like ^ord-\\d+$`);
      }
    }
  };
  const links = userConnections({ target: plan.target, flow });
  const linkDefault = defaultConnectionName(flow.steps ?? []);
  const userSteps = (steps: readonly UserStep[], at: Path, where: string): void =>
    steps.forEach((step, i) => {
      const here: Path = [...at, i];
      protocol = links.get(stepConnectionName(step, linkDefault) ?? "")?.protocol ?? plan.target.protocol;
      const position = userStepPosition(where, i);
      if ("request" in step) {
        templates({ url: step.request.url, headers: step.request.headers, json: step.request.json, body: step.request.body }, [...here, "request"], false);
        if (step.request.json !== undefined && step.request.body !== undefined) issue([...here, "request", "body"], "give json or body, not both");
        paths(step.request.capture, [...here, "request", "capture"]);
        addCaptures(step.request.capture, made);
      } else if ("connect" in step) {
        userConnected = true;
        templates({ url: step.connect.url, headers: step.connect.headers, query: step.connect.query, auth: step.connect.auth }, [...here, "connect"], false);
        if (step.connect.auth !== undefined && protocol !== "socketio")
          issue([...here, "connect", "auth"], `auth is Socket.IO's handshake payload (this target is ${protocol}): use headers or query`);
      } else if ("send" in step || "waitFor" in step) {
        if (!userConnected) issue(here, `${"send" in step ? "send" : "waitFor"} needs the connection: add a { connect: {} } step before it`);
        if ("send" in step) {
          const send = step.send;
          event(send.event, [...here, "send", "event"]);
          body(send, [...here, "send"]);
          templates({ json: send.json, text: send.text, args: send.args, headers: send.headers }, [...here, "send"], true);
          if (send.ack && !ACK_PROTOCOLS.includes(protocol))
            issue(
              [...here, "send", "ack"],
              `only Socket.IO and SocketCluster acknowledge (this target is ${protocol}): give the send a reply: { event, match }`,
            );
          if (send.ack && send.reply) issue([...here, "send", "reply"], "an acknowledgement is the reply: remove reply, or ack");
          if (send.capture && !send.ack && !send.reply)
            issue([...here, "send", "capture"], "a send captures from its reply: add reply: { match: { path: … } } (or ack: true on Socket.IO)");
          if (send.reply) {
            event(send.reply.event, [...here, "send", "reply", "event"], true);
            if (send.reply.match) {
              checkPath(send.reply.match.path, [...here, "send", "reply", "match", "path"], issue);
              templates(send.reply.match.equals, [...here, "send", "reply", "match", "equals"], true);
            }
          }
          paths(send.capture, [...here, "send", "capture"]);
          addCaptures(send.capture, made);
        } else {
          event(step.waitFor.event, [...here, "waitFor", "event"], true);
          if (step.waitFor.match) {
            checkPath(step.waitFor.match.path, [...here, "waitFor", "match", "path"], issue);
            templates(step.waitFor.match.equals, [...here, "waitFor", "match", "equals"], false);
          }
          paths(step.waitFor.capture, [...here, "waitFor", "capture"]);
          addCaptures(step.waitFor.capture, made);
        }
      } else if ("think" in step) {
        const t = step.think;
        if (typeof t === "object" && "min" in t && durationMs(t.min) > durationMs(t.max)) issue([...here, "think", "max"], `must be at least min (${t.min})`);
        if (typeof t === "object" && "mean" in t && t.distribution === "normal" && t.stddev === undefined)
          issue([...here, "think", "stddev"], "a normal think time needs its spread: add stddev, like 500ms");
      } else if ("loop" in step) {
        const { loop } = step;
        const bounded = loop.count !== undefined || loop.over !== undefined;
        if (!bounded && loop.while === undefined)
          issue(
            [...here, "loop"],
            "a loop needs an end: count (like count: 3), over (a duration, like over: 30s) or while (a condition, like while: { var: vars.total, below: 3 })",
          );
        if (loop.while) {
          const w = loop.while;
          const at = [...here, "loop", "while"];
          const loopName = `loop "${loop.name ?? `loop-${position}`}"`;
          const captured = w.var.startsWith("vars.") ? w.var.slice(5).split(".")[0]! : undefined;
          const inside = captured !== undefined && capturedIn(loop.steps).has(captured);
          condition(w, at);
          if (!inside && !bounded)
            issue(
              [...at, "var"],
              `${loopName} would never end: ${w.var} cannot change inside it (${captured === undefined ? "a data column is the same on every pass" : `no step in the loop captures ${captured}`}): capture the variable inside the loop, or add count or over`,
            );
          else if (captured !== undefined && !made.has(captured) && !inside)
            issue([...at, "var"], `${w.var} is not captured before this step: add capture: { ${captured}: "$.…" } to an earlier step`);
          else if (captured !== undefined && !made.has(captured) && w.notEquals === undefined)
            issue(
              [...at, "var"],
              `${loopName} never runs: ${w.var} is first captured inside it, so the condition is false before the first pass: capture it before the loop too (or test notEquals)`,
            );
        }
        userSteps(loop.steps, [...here, "loop", "steps"], position);
      } else if ("choice" in step) {
        for (const [b, branch] of step.choice.entries()) userSteps(branch.steps, [...here, "choice", b, "steps"], `${position}-${b + 1}`);
      } else if ("if" in step) {
        const v = step.if.var;
        if (v.startsWith("vars.") && !made.has(v.slice(5).split(".")[0]!))
          issue([...here, "if", "var"], `${v} is not captured before this step: add capture: { ${v.slice(5).split(".")[0]}: "$.…" } to an earlier step`);
        condition(step.if, [...here, "if"]);
        userSteps(step.steps, [...here, "steps"], `${position}-then`);
        if (step.else) userSteps(step.else, [...here, "else"], `${position}-else`);
      } else if (!userConnected) issue(here, "disconnect closes the connection: it needs a connect step before it");
    });
  if (flow.steps) userSteps(flow.steps, ["steps"], "");
  protocol = plan.target.protocol;
  if (protocol === "socketcluster") checkSocketclusterFlow(flow, issue);
  if (protocol === "stomp") checkStompFlow(flow, issue);
  checkMqttFlow({ target: plan.target, flow }, issue);
  checkFlowCodecs(flow, protocol, issue);
  flow.push?.forEach((p, i) => {
    event(p.event, ["push", i, "event"], true);
    checkPath(p.timestamp, ["push", i, "timestamp"], issue);
  });
  function checkMessage(m: FlowMessage, at: Path): void {
    event(m.event, [...at, "event"]);
    body(m, at);
    templates({ json: m.json, text: m.text, args: m.args, headers: m.headers }, at, true);
    const needsRequest = REQUEST_PROTOCOLS.includes(protocol);
    if (needsRequest && !m.request)
      issue([...at, "request"], `on ${protocol} a message is an HTTP request: add request: { method: POST, url: "/publish", json: {…} }`);
    if (!needsRequest && m.request)
      issue([...at, "request"], `only SSE, polling and HTTP targets publish by request (this target is ${protocol}): remove request and use json or text`);
    if (m.request) templates({ url: m.request.url, headers: m.request.headers, json: m.request.json, body: m.request.body }, [...at, "request"], true);
    if (m.reply === false) return;
    if (m.reply.ack && !ACK_PROTOCOLS.includes(protocol))
      issue([...at, "reply", "ack"], `only Socket.IO and SocketCluster acknowledge (this target is ${protocol}): match the reply by event and path`);
    if (m.reply.ack && (m.reply.event !== undefined || m.reply.match !== undefined))
      issue([...at, "reply"], "an acknowledgement is the reply: remove event and match, or ack");
    event(m.reply.event, [...at, "reply", "event"], true);
    if (m.reply.match) {
      checkPath(m.reply.match.path, [...at, "reply", "match", "path"], issue);
      templates(m.reply.match.equals, [...at, "reply", "match", "equals"], true);
    }
    const byId = m.reply.match?.equals?.includes("msg.id") ?? false;
    if ((plan.scenarioKind === "broadcast" || plan.scenarioKind === "groups") && !byId) {
      issue(
        [...at, "reply", "match"],
        `a ${plan.scenarioKind} delivery is matched on every receiver by the message's id: put "{{ msg.id }}" in the message and match: { path: "$.<that field>", equals: "{{ msg.id }}" }`,
      );
    }
  }
}

/** The comparisons a condition may make (one at most); none: the variable only has to be set. */
const CONDITION_COMPARISONS = Object.keys(userConditionSchema.shape).filter((k) => k !== "var") as Exclude<keyof UserCondition, "var">[];

/** Every capture name some step in `steps` (or nested in them) makes. */
function capturedIn(steps: readonly UserStep[], into = new Set<string>()): Set<string> {
  for (const step of steps) {
    if ("request" in step) addCaptures(step.request.capture, into);
    else if ("send" in step) addCaptures(step.send.capture, into);
    else if ("waitFor" in step) addCaptures(step.waitFor.capture, into);
    else if ("loop" in step) capturedIn(step.loop.steps, into);
    else if ("choice" in step) for (const b of step.choice) capturedIn(b.steps, into);
    else if ("if" in step) {
      capturedIn(step.steps, into);
      if (step.else) capturedIn(step.else, into);
    }
  }
  return into;
}

function addCaptures(capture: Record<string, unknown> | undefined, made: Set<string>): void {
  for (const key of Object.keys(capture ?? {})) made.add(key);
}

function checkPath(path: string, at: Path, issue: (path: Path, message: string) => void): void {
  const parsed = parseJsonPath(path);
  if (!parsed.ok) issue(at, parsed.message);
}

function dataColumns(flow: Flow, plan: FlowPlanView, issue: (path: Path, message: string) => void): Set<string> | undefined {
  const data = flow.data;
  if (!data) return undefined;
  if ((data.rows === undefined) === (data.csv === undefined)) {
    issue(["data"], 'give the rows one way: data: { rows: [{ user: a }] } or data: { csv: "user\\na" }');
    return undefined;
  }
  let rows: Record<string, unknown>[];
  try {
    rows = flowRows(data);
  } catch (err) {
    issue(["data", "csv"], `cannot read the CSV: ${(err as Error).message}`);
    return undefined;
  }
  if (rows.length === 0) {
    issue(["data"], "has no rows: add at least one (a CSV needs a header line and a row)");
    return undefined;
  }
  if (!data.reuse && rows.length < plan.connections) {
    issue(["data"], `has ${rows.length} rows for ${plan.connections} connections: add rows, or set reuse: true to let connections share them`);
  }
  return new Set(rows.flatMap((r) => Object.keys(r)));
}

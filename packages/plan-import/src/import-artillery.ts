import type { FlowInput, PlanInput } from "@volley/contracts";
import { phasesToConnections } from "./artillery-phases";
import { HTTP_STEPS, httpStep, jsonType, loopCount, outgoing, secs, setupNames, thinkSeconds, uniqueName } from "./artillery-steps";
import { artilleryUserSteps, userArrivals, withConnect } from "./artillery-users";
import { parseArtillery, type Payload, type Step } from "./artillery-schema";
import { constantsOf, convertValue, type TemplateScope } from "./artillery-templates";
import { PlanImportError } from "./import-error";
import { checked, type ImportResult } from "./import-har";
import type { MessageInput, SetupInput } from "./message-shapes";
import { retarget, type ImportOptions } from "./schedule-options";

export interface ArtilleryImportOptions extends ImportOptions {
  /** Payload files by the name config.payload.path gives (or its base name): their CSV text. */
  files?: Record<string, string>;
}

/**
 * A plan from an Artillery script using its `ws` or `socketio` engine: the target and its
 * options, phases as connections, the payload CSV as flow.data, what the scenario does before its
 * loop as setup, and what it does in the loop as the open-loop messages (their rate from the
 * loop's think time). Anything without a Volley equivalent is named in the notes.
 */
export function importArtillery(yamlText: string, options: ArtilleryImportOptions = {}): ImportResult {
  const notes: string[] = [];
  const script = parseArtillery(yamlText);
  const { config } = script;
  const scenario = script.scenarios[0]!;
  const engine = scenario.engine ?? Object.keys(config.engines ?? {}).find((e) => e.startsWith("socketio") || e === "ws");
  const protocol = engine === "ws" ? "ws" : engine?.startsWith("socketio") ? "socketio" : undefined;
  if (!protocol)
    throw new PlanImportError(
      `scenario "${scenario.name ?? 0}" uses the ${engine ?? "http"} engine: only engine: ws and engine: socketio (or socketio-v3) scenarios import`,
    );

  const { data, fields } = payloadData(config.payload, options.files ?? {}, notes);
  const scope: TemplateScope = { dataFields: fields, captures: new Set(), constants: constantsOf(config.variables, notes), inLoop: false, notes, where: "" };
  const arrivals = options.connections === undefined && options.rate === undefined ? userArrivals(config.phases) : undefined;
  if (arrivals) return checked(usersPlan(script, protocol, arrivals, scope, data, options, notes), notes);
  for (const hook of ["before", "after"] as const)
    if (script[hook])
      notes.push(
        `${hook}: runs once per test in Artillery; connections have no such hook: put what it does (a log-in, a seed) in flow.setup, or import as users (without --connections and --rate), where it becomes flow.${hook}`,
      );

  if (script.scenarios.length > 1)
    notes.push(`the script has ${script.scenarios.length} scenarios; imported the first (${scenario.name ?? "unnamed"}); make a plan per scenario`);
  const flow = scenario.flow as Step[];
  let loopAt = flow.findIndex((s) => "loop" in s);
  let before = loopAt === -1 ? flow : flow.slice(0, loopAt);
  const loopValue = loopAt === -1 ? [] : flow[loopAt]!.loop;
  if (!Array.isArray(loopValue) || loopValue.some((s) => typeof s !== "object" || s === null || Array.isArray(s))) {
    throw new PlanImportError(`flow[${loopAt}].loop must be a list of steps, like loop: [{ emit: … }, { think: 1 }] with count: 10`);
  }
  let loopSteps = loopValue as Step[];
  const iterations = loopAt === -1 ? 1 : loopCount(flow[loopAt]!);
  if (loopAt === -1) {
    // No loop: the last emit/send is what the user does repeatedly; what precedes it is setup.
    const last = before
      .map((s, i) => ({ s, i }))
      .filter(({ s }) => "emit" in s || "send" in s)
      .pop();
    if (!last) throw new PlanImportError(`scenario "${scenario.name ?? 0}" neither emits nor sends: add an emit (socketio) or send (ws) step`);
    loopSteps = before.slice(last.i);
    before = before.slice(0, last.i);
    loopAt = last.i;
    notes.push(
      `the flow has no loop: its last ${"emit" in last.s ? "emit" : "send"} became the message kind, sent at scenario.message.rate for scenario.duration, and what precedes it the setup`,
    );
  } else if (flow.length > loopAt + 1)
    notes.push(`${flow.length - loopAt - 1} step(s) after the loop left out: a Volley connection sends until scenario.duration ends`);

  const setup: SetupInput[] = [];
  let namespace: string | undefined;
  const connect: Record<string, unknown> = {};
  before.forEach((step, i) => {
    scope.where = `flow[${i}]`;
    const [kind] = Object.keys(step);
    if (kind === "think") setup.push({ think: secs(thinkSeconds(step, scope.where)) });
    else if (kind === "emit" || kind === "send") {
      const out = outgoing(step, protocol, scope);
      namespace ??= out.namespace;
      setup.push({
        send: {
          name: uniqueName(setupNames(setup), out.event ?? jsonType(out) ?? "send"),
          ...out.body,
          ...(out.ack ? { ack: true, ...(out.ackCapture ? { capture: out.ackCapture } : {}) } : {}),
        },
      });
      if (out.response)
        setup.push({
          waitFor: {
            name: uniqueName(setupNames(setup), out.response.event ?? "reply"),
            ...(out.response.event ? { event: out.response.event } : {}),
            ...(out.response.match ? { match: out.response.match } : {}),
            ...(out.response.capture ? { capture: out.response.capture } : {}),
          },
        });
    } else if (HTTP_STEPS.includes(kind!)) setup.push(httpStep(kind!, step[kind!] as Record<string, unknown>, scope));
    else if (kind === "connect" && typeof step.connect === "string")
      notes.push(`${scope.where}: connect to ${step.connect} — set target.url to it if it differs`);
    else notes.push(`${scope.where}: "${kind}" has no Volley equivalent (functions and custom code do not carry over); left out`);
  });

  scope.inLoop = true;
  const messages: MessageInput[] = [];
  let think = 0;
  loopSteps.forEach((step, i) => {
    scope.where = `flow[${loopAt}].loop[${i}]`;
    const [kind] = Object.keys(step);
    if (kind === "think") think += thinkSeconds(step, scope.where);
    else if (kind === "emit" || kind === "send") {
      const out = outgoing(step, protocol, scope);
      namespace ??= out.namespace;
      if (out.response?.capture || out.ackCapture) notes.push(`${scope.where}: captures inside the loop are left out (messages cannot capture)`);
      let reply: MessageInput["reply"] = out.ack
        ? { ack: true }
        : out.response
          ? { ...(out.response.event ? { event: out.response.event } : {}), ...(out.response.match ? { match: out.response.match } : {}) }
          : false;
      if (reply === false && protocol === "ws") {
        reply = {};
        notes.push(
          `${scope.where}: the next message the server sends is taken as this one's reply, in order (Artillery's ws engine awaits none); match it on a field if the server sends other messages too`,
        );
      } else if (reply === false)
        notes.push(
          `${scope.where}: no response is awaited, so it is sent fire and forget (reply: false) and has no latency; add reply: { event: … } if the server answers`,
        );
      messages.push({
        name: uniqueName(
          messages.map((m) => m.name),
          out.event ?? jsonType(out) ?? "message",
        ),
        ...out.body,
        reply,
      });
    } else notes.push(`${scope.where}: "${kind}" in the loop has no Volley equivalent; left out`);
  });
  if (messages.length === 0) throw new PlanImportError(`the loop of scenario "${scenario.name ?? 0}" neither emits nor sends: add an emit or send step to it`);

  // Artillery's loop: `iterations` rounds of its emits and thinks; Volley: a rate for a duration.
  const rate = options.rate ?? (think > 0 ? messages.length / think : 1);
  if (think === 0 && options.rate === undefined)
    notes.push("the loop has no think time, so its pace is unknown: scenario.message.rate is 1 per connection; set it");
  const flowSeconds = think > 0 && Number.isFinite(iterations) ? iterations * think : 30;
  if (!Number.isFinite(iterations)) notes.push("the loop runs without a count: scenario.duration is 30s; set it");
  const connections =
    options.connections !== undefined
      ? { count: options.connections, rate: Math.min(options.connections, 100) }
      : phasesToConnections(config.phases, flowSeconds, notes);

  const target = artilleryTarget(config, protocol, namespace, options, connect, notes);
  if (Object.keys(connect).length > 0) {
    // The connect goes after the leading requests and thinks (their captures), before the first send.
    Object.assign(scope, { where: `config.${protocol === "ws" ? "ws" : "socketio"}`, inLoop: false });
    const at = setup.findIndex((s) => "send" in s || "waitFor" in s);
    setup.splice(at === -1 ? setup.length : at, 0, { connect: convertValue(connect, scope) as never });
  }
  const flowOut: FlowInput = { ...(data ? { data } : {}), setup, messages };
  const plan: PlanInput = {
    name: options.name ?? `Imported from Artillery: ${scenario.name ?? config.target}`,
    target,
    connections,
    scenario: { kind: "echo", duration: options.duration ?? secs(flowSeconds), message: { rate: Math.round(rate * 1000) / 1000, timeout: "10s" } },
    flow: flowOut,
  };
  notes.push(
    "the schedule comes from config.phases (connections) and the loop (scenario.message.rate from its think time, scenario.duration from its count): check both",
  );
  return checked(plan, notes);
}

function artilleryTarget(
  config: ReturnType<typeof parseArtillery>["config"],
  protocol: "ws" | "socketio",
  namespace: string | undefined,
  options: ImportOptions,
  connect: Record<string, unknown>,
  notes: string[],
): PlanInput["target"] {
  if (!URL.canParse(config.target))
    throw new PlanImportError(
      `config.target "${config.target}" is not a URL: write it like ${protocol === "ws" ? "ws://localhost:8080" : "http://localhost:3000"}`,
    );
  if (protocol === "ws") {
    const ws = config.ws ?? {};
    if (ws.headers) connect.headers = ws.headers;
    const subprotocols = Array.isArray(ws.subprotocols) ? (ws.subprotocols as string[]) : undefined;
    const url = retarget(config.target.replace(/^http/, "ws"), options.targetUrl);
    return { url, protocol: "ws", ...(subprotocols ? { ws: { subprotocols } } : {}) };
  }
  const io = config.socketio ?? {};
  if (io.query) connect.query = typeof io.query === "string" ? Object.fromEntries(new URLSearchParams(io.query)) : io.query;
  if (io.extraHeaders) connect.headers = io.extraHeaders;
  if (io.auth) connect.auth = io.auth;
  const transports = Array.isArray(io.transports)
    ? (io.transports as ("websocket" | "polling")[]).filter((t) => t === "websocket" || t === "polling")
    : undefined;
  const base = config.target.replace(/^ws/, "http").replace(/\/$/, "");
  const url = retarget(`${base}${namespace && namespace !== "/" ? namespace : ""}`, options.targetUrl);
  const socketio = { ...(transports && transports.length > 0 ? { transports } : {}), ...(typeof io.path === "string" ? { path: io.path } : {}) };
  if (Object.keys(config.engines ?? {}).includes("socketio-v3") === false)
    notes.push("Artillery's socketio engine: the plan assumes a Socket.IO 3/4 server; for Socket.IO 2 set target.socketio.version: 2");
  return { url, protocol: "socketio", ...(Object.keys(socketio).length > 0 ? { socketio } : {}) };
}

/**
 * The script as Volley users, step for step: each arriving user runs one scenario (picked by
 * weight when there are several) once and leaves, as Artillery's virtual users do, so a user sends
 * as many messages here as there.
 */
function usersPlan(
  script: ReturnType<typeof parseArtillery>,
  protocol: "ws" | "socketio",
  arrivals: NonNullable<ReturnType<typeof userArrivals>>,
  scope: TemplateScope,
  data: FlowInput["data"],
  options: ArtilleryImportOptions,
  notes: string[],
): PlanInput {
  const { config } = script;
  const names: string[] = [];
  let namespace: string | undefined;
  const branches = script.scenarios.map((sc, k) => {
    const converted = artilleryUserSteps(sc.flow as Step[], protocol, scope, `scenarios[${k}].flow`, names);
    namespace ??= converted.namespace;
    return { weight: sc.weight ?? 1, steps: converted.steps };
  });
  const connect: Record<string, unknown> = {};
  const target = artilleryTarget(config, protocol, namespace, options, connect, notes);
  Object.assign(scope, { where: `config.${protocol}`, inLoop: false });
  const connectStep = convertValue(connect, scope);
  const steps =
    branches.length === 1
      ? withConnect(branches[0]!.steps, connectStep)
      : [{ choice: branches.map((b) => ({ ...b, steps: withConnect(b.steps, connectStep) })) }];
  if (branches.length > 1) notes.push(`the ${branches.length} scenarios became a weighted choice: each user takes one, by weight`);
  const peak = Math.max(arrivals.arrivalRate, ...(arrivals.stages ?? []).map((st) => st.target));
  const total = Math.ceil(peak * arrivals.seconds);
  const count = Math.max(1, Math.min(arrivals.maxVusers ?? total, 100_000));
  notes.push(
    `users arrive at ${arrivals.stages ? `${arrivals.arrivalRate}/s, then along ${arrivals.stages.length} stages (rampTo and pauses as linear ramps and 0 s steps),` : `${arrivals.arrivalRate}/s`} for ${secs(arrivals.seconds)} (config.phases), each runs its scenario once and leaves; connections.count ${count} is the most at once${arrivals.maxVusers === undefined ? " (every arrival: none is dropped)" : " (maxVusers)"}`,
  );
  return {
    name: options.name ?? `Imported from Artillery: ${script.scenarios[0]!.name ?? config.target}`,
    target,
    connections: { count },
    scenario: {
      kind: "users",
      arrivalRate: arrivals.arrivalRate,
      duration: options.duration ?? secs(arrivals.seconds),
      ...(arrivals.stages ? { stages: arrivals.stages } : {}),
    },
    flow: {
      ...(data ? { data: { ...data, reuse: true } } : {}),
      ...hookRequests(script, "before", scope),
      steps: steps as NonNullable<FlowInput["steps"]>,
      ...hookRequests(script, "after", scope),
    },
  };
}

/**
 * The script's `before` or `after` flow as flow.before / flow.after: its HTTP requests (with their
 * captures, which every user then reads), made once per shard: once per test on one agent.
 */
function hookRequests(script: ReturnType<typeof parseArtillery>, hook: "before" | "after", scope: TemplateScope): Pick<FlowInput, "before" | "after"> {
  const flow = script[hook]?.flow as Step[] | undefined;
  if (!flow) return {};
  const names: string[] = [];
  const requests: NonNullable<FlowInput["before"]> = [];
  flow.forEach((step, i) => {
    scope.where = `${hook}.flow[${i}]`;
    const kind = Object.keys(step)[0]!;
    if (!HTTP_STEPS.includes(kind)) {
      scope.notes.push(`${scope.where}: "${kind}" in ${hook} has no Volley equivalent (only HTTP requests run once around the users); left out`);
      return;
    }
    const { request } = httpStep(kind, step[kind] as Record<string, unknown>, scope) as {
      request: NonNullable<FlowInput["before"]>[number]["request"] & { name: string };
    };
    request.name = uniqueName(names, request.name);
    names.push(request.name);
    // Artillery's hooks go on whatever they are answered; a Volley request fails on anything but 2xx.
    requests.push({ request: { ...request, expect: { status: "any" } } });
  });
  if (requests.length === 0) return {};
  scope.notes.push(
    `${hook}: its ${requests.length} request(s) became flow.${hook}, made once per agent shard ${hook === "before" ? "before the first user arrives (its captures are every user's)" : "after the last user left"}: once per test with one agent, once per agent when the run is split over several; with expect: { status: any } they go on whatever the answer, as Artillery's do (remove it to stop the run when one is refused)`,
  );
  return { [hook]: requests };
}

/** config.payload as flow.data: the CSV file from options.files, with `fields` as its header. */
function payloadData(
  payload: Payload | Payload[] | undefined,
  files: Record<string, string>,
  notes: string[],
): { data?: FlowInput["data"]; fields: Set<string> } {
  if (!payload) return { fields: new Set() };
  const list = Array.isArray(payload) ? payload : [payload];
  if (list.length > 1) notes.push(`config.payload lists ${list.length} files; imported the first (${list[0]!.path})`);
  const p = list[0]!;
  const fields = p.fields ?? [];
  const text = files[p.path] ?? files[p.path.split("/").pop()!];
  if (text === undefined) {
    notes.push(
      `payload file ${p.path} was not given: flow.data holds one placeholder row; pass the file (--payload ${p.path.split("/").pop()}=<path>) or paste its rows into flow.data.csv`,
    );
    return { data: { rows: [Object.fromEntries(fields.map((f) => [f, `<${f}>`]))], reuse: true }, fields: new Set(fields) };
  }
  const delimiter = p.delimiter ?? ",";
  let lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (p.skipHeader) lines = lines.slice(1);
  const header = fields.length > 0 ? fields : (lines.shift() ?? "").split(delimiter).map((s) => s.trim());
  const body = delimiter === "," ? lines : lines.map((l) => l.split(delimiter).join(","));
  if (p.order === "sequence" || p.order === undefined) notes.push("payload rows go to connections in order (connection i gets row i modulo the rows)");
  return { data: { csv: [header.join(","), ...body].join("\n"), reuse: true }, fields: new Set(header) };
}

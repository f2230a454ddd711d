import type { FlowInput } from "@volley/contracts";
import { getAt, jsonPath, leaves, safeName, setAt, type Path } from "./json-leaves";
import type { Frame } from "./recorded-session";

export type SetupInput = NonNullable<FlowInput["setup"]>[number];
export type MessageInput = NonNullable<FlowInput["messages"]>[number];
type Reply = MessageInput["reply"];

/** Raw WebSocket JSON messages usually say what they are in one of these fields. */
const DISCRIMINATORS = ["type", "event", "action", "op", "method", "cmd", "kind", "channel"];
const SETUP_WORDS = /^(join|subscribe|sub|auth|authenticate|login|hello|identify|init|register|connect|handshake|enter)/i;
const ID_KEY = /(^id$|id$|_id$|uuid|nonce|correlation|requestid|ref$)/i;
const UUIDISH = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-zA-Z_-]{16,}$/;

const discriminator = (f: Frame): { path: Path; value: string } | undefined => {
  if (!f.json || typeof f.body !== "object" || f.body === null || Array.isArray(f.body)) return undefined;
  for (const key of DISCRIMINATORS) {
    const v = (f.body as Record<string, unknown>)[key];
    if (typeof v === "string") return { path: [key], value: v };
  }
  return undefined;
};

/** Messages of one shape: same event (or type field) and the same keys. */
function shapeKey(f: Frame): string {
  const keys = f.json && typeof f.body === "object" && f.body !== null ? Object.keys(f.body).sort().join(",") : f.binary !== undefined ? "binary" : "text";
  return `${f.event ?? discriminator(f)?.value ?? ""}|${keys}|${f.ackId !== undefined ? "ack" : ""}`;
}

const label = (f: Frame): string => f.event ?? discriminator(f)?.value ?? (f.json ? "message" : f.binary !== undefined ? "binary" : "text");

export interface FlowParts {
  setup: SetupInput[];
  messages: MessageInput[];
}

/**
 * Sorts the sent messages into setup (sent once, before the repeated ones: join, subscribe, auth)
 * and message kinds (the repeated shapes), turns what varies across samples into templates, and
 * finds each kind's reply among the received messages.
 */
export function analyzeFrames(frames: Frame[], protocol: "ws" | "socketio", notes: string[]): FlowParts {
  const sent = frames.map((f, i) => ({ f, i })).filter(({ f }) => f.dir === "send");
  if (sent.length === 0) throw new Error("unreachable: checked by the caller");
  const groups = new Map<string, number[]>();
  for (const { f, i } of sent) groups.set(shapeKey(f), [...(groups.get(shapeKey(f)) ?? []), i]);
  let repeated = [...groups.entries()].filter(([, is]) => is.length > 1);
  if (repeated.length === 0) {
    // One of everything: the last send that does not look like setup is what the user does.
    const last = [...sent].reverse().find(({ f }) => !SETUP_WORDS.test(label(f))) ?? sent[sent.length - 1]!;
    repeated = [[shapeKey(last.f), [last.i]]];
    notes.push(`no message was sent more than once; "${label(last.f)}" became the message kind (record a longer session to tell setup from traffic)`);
  }
  const repeatedKeys = new Set(repeated.map(([k]) => k));
  const firstRepeated = Math.min(...repeated.map(([, is]) => is[0]!));

  const setup: SetupInput[] = [];
  /** Labels of received messages the plan consumes (waitFor answers, replies). */
  const awaited = new Set<string>();
  const names = new Set<string>();
  const unique = (base: string) => {
    let n = base;
    for (let k = 2; names.has(n); k++) n = `${base}-${k}`.slice(-60);
    names.add(n);
    return n;
  };
  for (const { f, i } of sent) {
    if (repeatedKeys.has(shapeKey(f))) continue;
    if (i > firstRepeated) {
      notes.push(`"${label(f)}" was sent once, after the messages began; it was left out (add it to flow.setup or flow.messages if the load needs it)`);
      continue;
    }
    const name = unique(safeName(label(f), "send"));
    setup.push({ send: { name, ...outgoing(f, f.body), ...(f.ackId !== undefined ? { ack: true } : {}) } });
    if (f.ackId !== undefined) continue;
    const nextSend = frames.findIndex((g, j) => j > i && g.dir === "send");
    const answer = frames.slice(i + 1, nextSend === -1 ? undefined : nextSend).find((g) => g.dir === "receive" && g.ackOf === undefined);
    if (!answer) continue;
    const waitName = unique(safeName(`${label(answer)}`, "answer"));
    awaited.add(label(answer));
    if (protocol === "socketio" && answer.event) setup.push({ waitFor: { name: waitName, event: answer.event } });
    else {
      const d = discriminator(answer);
      setup.push({
        waitFor: { name: waitName, ...(d ? { match: { path: jsonPath(d.path), equals: d.value } } : {}), ...(answer.codec ? { codec: answer.codec } : {}) },
      });
    }
  }

  for (const step of setup) {
    if (!("send" in step) || typeof step.send.json !== "object" || step.send.json === null) continue;
    const room = Object.entries(step.send.json).find(([k, v]) => /^(room|channel|topic|group)$/i.test(k) && typeof v === "string");
    if (room)
      notes.push(
        `every connection sends ${step.send.name} with ${room[0]} "${String(room[1])}": they all share it, so each message reaches every connection there; for one per connection write "${String(room[1])}-{{ conn.index }}" (here and in the messages), or use scenario broadcast with "{{ conn.room }}"`,
      );
  }
  const messages = repeated.map(([, indices]) => messageKind(frames, indices, protocol, notes, unique, awaited));
  const received = frames.filter((f) => f.dir === "receive" && f.ackOf === undefined);
  const others = [...new Set(received.map(label))].filter((e) => !awaited.has(e));
  if (others.length > 0) notes.push(`received but not awaited by the plan: ${others.join(", ")} (counted per event as events.<name>)`);
  return { setup, messages };
}

function outgoing(f: Frame, body: unknown): Pick<MessageInput, "event" | "json" | "text" | "args" | "binary" | "codec"> {
  return {
    ...(f.event !== undefined ? { event: f.event } : {}),
    ...(f.binary !== undefined ? { binary: { base64: f.binary } } : f.json ? { json: body as never } : { text: String(body) }),
    ...(f.codec ? { codec: f.codec } : {}),
    ...(f.args ? { args: f.args as never[] } : {}),
  };
}

function messageKind(
  frames: Frame[],
  indices: number[],
  protocol: "ws" | "socketio",
  notes: string[],
  unique: (n: string) => string,
  awaited: Set<string>,
): MessageInput {
  const samples = indices.map((i) => frames[i]!);
  const first = samples[0]!;
  const name = unique(safeName(label(first), "message"));
  let template: unknown = first.body;
  const varying = new Map<string, { path: Path; values: unknown[] }>();
  if (first.json) {
    for (const leaf of leaves(first.body)) {
      const values = samples.map((s) => getAt(s.body, leaf.path));
      if (values.some((v) => v !== leaf.value)) varying.set(jsonPath(leaf.path), { path: leaf.path, values });
    }
  } else if (first.binary !== undefined) {
    if (samples.some((s) => s.body !== first.body)) notes.push(`${name}: the recorded binary messages differ; every one sends the first as recorded`);
  } else if (samples.some((s) => s.body !== first.body)) varying.set("$", { path: [], values: samples.map((s) => s.body) });

  // The reply: an acknowledgement, a received message carrying a value of this one back, or the next one in order.
  let reply: Reply = false;
  let idPath: Path | undefined;
  if (first.ackId !== undefined) reply = { ack: true };
  else {
    const echoed = findEchoed(frames, indices, first.json ? candidateIds(first, varying) : []);
    if (echoed) {
      awaited.add(echoed.label);
      idPath = echoed.sentPath;
      if (typeof getAt(first.body, idPath) === "number")
        notes.push(
          `${name}: its id ${jsonPath(idPath)} was a number in the recording; the plan sends Volley's message id there, a string ("{{ msg.id }}"): check that the server echoes string ids (JSON-RPC servers do)`,
        );
      const match = { path: echoed.receivedPath, equals: "{{ msg.id }}" };
      reply = protocol === "socketio" && echoed.event !== undefined ? { event: echoed.event, match } : { match };
    } else {
      const next = indices.map((i) => frames.slice(i + 1).find((g) => g.dir === "receive" && g.ackOf === undefined)).filter((g): g is Frame => g !== undefined);
      const counts = new Map<string, { n: number; f: Frame }>();
      for (const g of next) counts.set(label(g), { n: (counts.get(label(g))?.n ?? 0) + 1, f: g });
      const best = [...counts.values()].sort((a, b) => b.n - a.n)[0];
      if (best && best.n * 2 >= indices.length) {
        awaited.add(label(best.f));
        const d = discriminator(best.f);
        reply = protocol === "socketio" && best.f.event ? { event: best.f.event } : d ? { match: { path: jsonPath(d.path), equals: d.value } } : {};
        notes.push(
          `${name}: no received message carries a value of it back, so its reply is the next "${label(best.f)}" in order; if the server copies an id, put "{{ msg.id }}" in that field and match on it`,
        );
      } else notes.push(`${name}: no reply found in the recording; sent fire and forget (reply: false)`);
    }
  }

  for (const [key, { path, values }] of varying) {
    const isId = idPath !== undefined && jsonPath(idPath) === key;
    const value = isId ? "{{ msg.id }}" : templated(path, values, key, name, notes);
    template = path.length === 0 ? value : setAt(template, path, value);
  }
  return { name, ...outgoing(first, template), reply };
}

/**
 * Fields of a message that may be its correlation id: varying strings, id-like keys first. Short
 * values (numbers, like JSON-RPC's, or "1", "2" like graphql-ws's) only under an id-like key.
 */
function candidateIds(first: Frame, varying: Map<string, { path: Path; values: unknown[] }>): Path[] {
  const all = leaves(first.body).filter((l) => typeof l.value === "string" || typeof l.value === "number");
  const score = (l: { path: Path; value: unknown }) =>
    (varying.has(jsonPath(l.path)) ? 2 : 0) + (ID_KEY.test(String(l.path[l.path.length - 1])) ? 1 : 0) + (UUIDISH.test(String(l.value)) ? 1 : 0);
  return all
    .filter((l) => score(l) >= (weak(l.value) ? 3 : 2))
    .sort((a, b) => score(b) - score(a))
    .map((l) => l.path);
}

/** A value too common to be found by chance alone: it must come back under the same key. */
const weak = (v: unknown) => typeof v !== "string" || v.length < 4;

/** The first candidate field whose value comes back in a later received message, for most samples. */
function findEchoed(
  frames: Frame[],
  indices: number[],
  candidates: Path[],
): { sentPath: Path; receivedPath: string; event?: string; label: string } | undefined {
  for (const sentPath of candidates) {
    const hits = new Map<string, { n: number; path: Path; event?: string; label: string }>();
    for (const i of indices) {
      const value = getAt(frames[i]!.body, sentPath);
      const key = sentPath[sentPath.length - 1];
      const same = (l: { path: Path; value: unknown }) => l.value === value && (!weak(value) || l.path[l.path.length - 1] === key);
      const back = frames.slice(i + 1).find((g) => g.dir === "receive" && g.ackOf === undefined && g.args === undefined && leaves(g.body).some(same));
      if (!back) continue;
      const leaf = leaves(back.body).find(same)!;
      const hit = `${back.event ?? ""}|${jsonPath(leaf.path)}`;
      hits.set(hit, { n: (hits.get(hit)?.n ?? 0) + 1, path: leaf.path, label: label(back), ...(back.event !== undefined ? { event: back.event } : {}) });
    }
    const best = [...hits.values()].sort((a, b) => b.n - a.n)[0];
    if (best && best.n * 2 >= indices.length + (indices.length === 1 ? 0 : 1))
      return { sentPath, receivedPath: jsonPath(best.path), label: best.label, ...(best.event !== undefined ? { event: best.event } : {}) };
  }
  return undefined;
}

/** A template for a value that varies across samples: ids, counters, numbered text, else the first value. */
function templated(path: Path, values: unknown[], key: string, kind: string, notes: string[]): unknown {
  const field = String(path[path.length - 1] ?? "");
  if (values.every((v) => typeof v === "number")) {
    const nums = values as number[];
    // Counted from 1 in the recording (the page's own numbering), from 0 otherwise.
    if (nums.every((n, i) => i === 0 || n > nums[i - 1]!)) return nums[0] === 1 ? "{{ msg.number }}" : "{{ msg.seq }}";
    if (nums.every((n) => Math.abs(n - Date.now()) < 10 * 365 * 86_400_000)) return "{{ time.ms }}";
  }
  if (values.every((v) => typeof v === "string")) {
    const strs = values as string[];
    if (new Set(strs).size === strs.length && (ID_KEY.test(field) || strs.every((s) => UUIDISH.test(s)))) return "{{ msg.id }}";
    const prefix = commonPrefix(strs);
    const suffix = commonPrefix(strs.map((s) => [...s].reverse().join("")))
      .split("")
      .reverse()
      .join("");
    const middles = strs.map((s) => s.slice(prefix.length, s.length - suffix.length));
    if (prefix.length + suffix.length < Math.min(...strs.map((s) => s.length)) + 1 && middles.every((m) => /^\d+$/.test(m)))
      return `${prefix}{{ ${middles[0] === "1" ? "msg.number" : "msg.seq"} }}${suffix}`;
  }
  notes.push(
    `${kind}: ${key} varies across the recorded messages (${values
      .slice(0, 3)
      .map((v) => JSON.stringify(v))
      .join(", ")}…); kept the first value — template it if it matters`,
  );
  return values[0];
}

function commonPrefix(strs: string[]): string {
  let p = strs[0] ?? "";
  for (const s of strs) while (!s.startsWith(p)) p = p.slice(0, -1);
  // Never split a number: "hello #9" / "hello #10" share "hello #", not "hello #1".
  return p.replace(/\d+$/, "");
}

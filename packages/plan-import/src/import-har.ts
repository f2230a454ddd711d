import { planSchema, type FlowInput, type PlanInput } from "@volley/contracts";
import { parseHar } from "./har-schema";
import { PlanImportError } from "./import-error";
import { analyzeFrames, type SetupInput } from "./message-shapes";
import { recordedSession } from "./recorded-session";
import { retarget, schedule, SCHEDULE_NOTE, type ImportOptions } from "./schedule-options";
import { SessionRequests } from "./setup-requests";

export interface ImportResult {
  plan: PlanInput;
  /** What the import guessed or left out, and what to adjust: for the user to read. */
  notes: string[];
}

const DROPPED_HEADERS = /^(user-agent|sec-|accept|connection|upgrade|host|origin|pragma|cache-control|content-length|referer|cookie$)/i;

/**
 * A plan from a HAR recorded in the browser (DevTools "Save all as HAR with content", with its
 * WebSocket messages): the handshake's URL, credentials and cookies, the login requests before it,
 * the sent messages as setup steps and message templates, the received ones as their replies.
 */
export function importHar(har: unknown, options: ImportOptions = {}): ImportResult {
  const notes: string[] = [];
  const entries = parseHar(har);
  const session = recordedSession(entries, notes);
  if (!session.frames.some((f) => f.dir === "send")) {
    throw new PlanImportError(
      `the WebSocket session ${session.entry.request.url} sent no ${session.protocol === "socketio" ? "Socket.IO events" : "text messages"}: record while using the feature you want to load (send a few messages), then export again`,
    );
  }
  const requests = new SessionRequests(entries, session.index, session.url.host, notes, options.origins);
  const parts = analyzeFrames(session.frames, session.protocol, notes);

  // The handshake: credentials and the app's own headers; cookies a recorded login set come from the agent's cookie jar.
  const headers: Record<string, string> = {};
  for (const h of session.entry.request.headers) {
    if (h.name.startsWith(":")) continue;
    if (h.name.toLowerCase() === "cookie") {
      const kept = h.value
        .split(";")
        .map((c) => c.trim())
        .filter((c) => c !== "" && !requests.setsCookie(c.split("=")[0]!));
      if (kept.length > 0) {
        headers.Cookie = kept.join("; ");
        notes.push("the handshake sends the recorded cookies (Cookie header): they may have expired; log in in flow.setup instead if the server checks them");
      }
    } else if (SessionRequests.keepHeader(h.name) && !DROPPED_HEADERS.test(h.name)) headers[h.name] = h.value;
  }
  const query: Record<string, string> = { ...session.query };
  let url = session.url;
  if (session.protocol === "ws") {
    // Query values that came from a login response move to the connect step, as templates.
    for (const [k, v] of session.url.searchParams) if (requests.substitute(v) !== v) query[k] = v;
    if (Object.keys(query).length > 0) {
      url = new URL(session.url);
      for (const k of Object.keys(query)) url.searchParams.delete(k);
    }
  }
  const connect = requests.substitute({
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(Object.keys(query).length > 0 ? { query } : {}),
    ...(session.auth !== undefined ? { auth: session.auth as never } : {}),
  });
  const sends = requests.substitute(parts.setup);
  const messages = requests.substitute(parts.messages);
  const setup: SetupInput[] = [...requests.steps(), ...(Object.keys(connect).length > 0 ? [{ connect }] : []), ...sends];

  const target: PlanInput["target"] = session.protocol === "socketio" ? socketioTarget(session, options, notes) : wsTarget(session, url, options);
  const flow: FlowInput = { setup, messages };
  const where =
    session.protocol === "socketio" ? `${session.url.host}${session.nsp === "/" ? "" : session.nsp} (Socket.IO)` : `${session.url.host}${session.url.pathname}`;
  const plan: PlanInput = { name: options.name ?? `Imported from HAR: ${where}`, target, ...schedule(options), flow };
  notes.push(SCHEDULE_NOTE);
  return checked(plan, notes);
}

function socketioTarget(session: ReturnType<typeof recordedSession>, options: ImportOptions, notes: string[]): PlanInput["target"] {
  const origin = `${session.url.protocol === "wss:" ? "https:" : "http:"}//${session.url.host}`;
  const url = retarget(`${origin}${session.nsp === "/" ? "" : session.nsp}`, options.targetUrl);
  const enginePath = session.url.pathname.replace(/\/$/, "");
  const socketio = {
    ...(enginePath !== "/socket.io" ? { path: enginePath } : {}),
    ...(session.version === 2 ? { version: 2 as const } : {}),
    // A client that never polled connected straight over WebSocket.
    ...(!session.upgraded ? { transports: ["websocket" as const] } : {}),
  };
  if (session.version === 2) notes.push("the recording is Engine.IO 3: target.socketio.version is 2 (Socket.IO 2 server)");
  return { url, protocol: "socketio", ...(Object.keys(socketio).length > 0 ? { socketio } : {}) };
}

function wsTarget(session: ReturnType<typeof recordedSession>, url: URL, options: ImportOptions): PlanInput["target"] {
  const subprotocol = session.entry.request.headers.find((h) => h.name.toLowerCase() === "sec-websocket-protocol")?.value;
  const subprotocols = subprotocol
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return { url: retarget(url.toString(), options.targetUrl), protocol: "ws", ...(subprotocols && subprotocols.length > 0 ? { ws: { subprotocols } } : {}) };
}

/** Notes the plan's remaining validation issues (an import never hides them). */
export function checked(plan: PlanInput, notes: string[]): ImportResult {
  const result = planSchema.safeParse(plan);
  if (!result.success) for (const i of result.error.issues) notes.push(`fix before running: ${i.path.join(".")}: ${i.message}`);
  return { plan, notes };
}

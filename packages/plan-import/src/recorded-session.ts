import { unpack } from "msgpackr";
import { type HarEntry, isWebSocketEntry, responseText } from "./har-schema";
import { PlanImportError } from "./import-error";
import { decodeEnginePacket, splitPollingPayload } from "./socketio-packets";

/** One application message of the recording, framing removed. */
export interface Frame {
  dir: "send" | "receive";
  /** Socket.IO: the event. */
  event?: string;
  /** The JSON value (Socket.IO: the first argument), or the text of a non-JSON frame. */
  body: unknown;
  json: boolean;
  /** Socket.IO: further arguments. */
  args?: unknown[];
  /** Socket.IO: the emit asked for an acknowledgement with this id. */
  ackId?: number;
  /** Socket.IO: this received frame acknowledges the emit with this id. */
  ackOf?: number;
  /** A binary frame that decoded as MessagePack: `body` is its value (json), sent with codec msgpack. */
  codec?: "msgpack";
  /** A binary frame of an unknown codec: its bytes, base64 (`body` is the same text). */
  binary?: string;
}

export interface RecordedSession {
  protocol: "ws" | "socketio";
  /** The WebSocket handshake entry. */
  entry: HarEntry;
  /** Its position in the HAR (requests before it may be the login). */
  index: number;
  url: URL;
  /** Socket.IO: the namespace, the server's major version, the handshake auth, whether it upgraded from polling. */
  nsp: string;
  version: 2 | 4;
  auth?: unknown;
  /** Socket.IO 2: the namespace connect's query. */
  query?: Record<string, string>;
  upgraded: boolean;
  frames: Frame[];
}

const isSocketio = (url: URL) => url.pathname.includes("/socket.io") && url.searchParams.has("EIO");

/** The recorded WebSocket session with the most messages, its Socket.IO framing decoded. */
export function recordedSession(entries: HarEntry[], notes: string[]): RecordedSession {
  const sockets = entries.map((e, index) => ({ e, index })).filter(({ e }) => isWebSocketEntry(e));
  const withMessages = sockets.filter(({ e }) => (e._webSocketMessages?.length ?? 0) > 0);
  if (withMessages.length === 0) {
    const why =
      sockets.length > 0
        ? `the HAR has ${sockets.length} WebSocket ${sockets.length === 1 ? "entry" : "entries"} but no messages in them`
        : "no WebSocket entry (_webSocketMessages) in the HAR";
    throw new PlanImportError(
      `${why}: record with the DevTools Network panel open and 'Preserve log' on before the page connects, use the app, then "Save all as HAR with content" (Chromium writes WebSocket messages as _webSocketMessages)`,
    );
  }
  const { e: entry, index } = withMessages.reduce((a, b) => (b.e._webSocketMessages!.length > a.e._webSocketMessages!.length ? b : a));
  if (withMessages.length > 1) notes.push(`the HAR has ${withMessages.length} WebSocket sessions with messages; imported the busiest, ${entry.request.url}`);
  const url = new URL(entry.request.url);
  const binary = entry._webSocketMessages!.filter((m) => m.opcode === 2).length;

  if (!isSocketio(url)) {
    const frames: Frame[] = entry
      ._webSocketMessages!.filter((m) => m.opcode === 1 || m.opcode === 2)
      .map((m) => ({
        dir: m.type,
        ...(m.opcode === 1 ? textBody(m.data) : binaryBody(m.data)),
      }));
    const packed = frames.filter((f) => f.codec === "msgpack").length;
    const opaque = frames.filter((f) => f.binary !== undefined).length;
    if (packed > 0) notes.push(`${packed} binary WebSocket messages decoded as MessagePack: they are written as json with codec: msgpack`);
    if (opaque > 0)
      notes.push(
        `check: ${opaque} binary WebSocket messages are in a codec the import does not know (not MessagePack; protobuf, CBOR…): they are sent as recorded (binary: { base64 }), the same bytes every time; for protobuf write them as json with codec: { protobuf: { proto, type } } and template their fields`,
      );
    return { protocol: "ws", entry, index, url, nsp: "/", version: 4, upgraded: false, frames };
  }
  if (binary > 0)
    notes.push(
      `${binary} binary WebSocket messages were left out: Socket.IO binary attachments are not imported (write them with codec: msgpack or binary: { base64 })`,
    );

  const version = url.searchParams.get("EIO") === "3" ? 2 : 4;
  const sid = url.searchParams.get("sid");
  // An upgraded session said its first words (the connect with auth, often more) over polling.
  const texts: { dir: "send" | "receive"; text: string }[] = [];
  if (sid) {
    for (const e of entries.slice(0, index)) {
      const u = URL.canParse(e.request.url) ? new URL(e.request.url) : undefined;
      if (!u || !isSocketio(u) || u.searchParams.get("transport") !== "polling") continue;
      const sent = e.request.postData?.text;
      const received = responseText(e);
      const opens = u.searchParams.get("sid") === sid || (received?.includes(`"sid":"${sid}"`) ?? false);
      if (!opens) continue;
      if (e.request.method === "POST" && sent) for (const p of splitPollingPayload(sent)) texts.push({ dir: "send", text: p });
      if (e.request.method === "GET" && received) for (const p of splitPollingPayload(received)) texts.push({ dir: "receive", text: p });
    }
  }
  for (const m of entry._webSocketMessages!) if (m.opcode === 1) texts.push({ dir: m.type, text: m.data });

  const frames: Frame[] = [];
  let nsp = "/";
  let auth: unknown;
  let query: Record<string, string> | undefined;
  let binaryEvents = 0;
  for (const { dir, text } of texts) {
    const p = decodeEnginePacket(text);
    if (p.kind === "other") continue;
    if (p.kind !== "binary" && p.nsp !== "/") nsp = p.nsp;
    if (p.kind === "binary") binaryEvents++;
    else if (p.kind === "connect" && dir === "send") {
      if (p.data !== undefined) auth = p.data;
      if (p.query) query = p.query;
    } else if (p.kind === "connect_error") notes.push(`the server refused the recorded connect: ${JSON.stringify(p.data)}`);
    else if (p.kind === "event") {
      frames.push({
        dir,
        event: p.event,
        body: p.args[0] ?? null,
        json: true,
        ...(p.args.length > 1 ? { args: p.args.slice(1) } : {}),
        ...(p.ackId !== undefined ? { ackId: p.ackId } : {}),
      });
    } else if (p.kind === "ack") frames.push({ dir, body: p.args[0] ?? null, json: true, ackOf: p.ackId });
  }
  if (binaryEvents > 0) notes.push(`${binaryEvents} Socket.IO binary events were left out: a flow sends JSON`);
  return {
    protocol: "socketio",
    entry,
    index,
    url,
    nsp,
    version,
    ...(auth !== undefined ? { auth } : {}),
    ...(query ? { query } : {}),
    upgraded: sid !== null,
    frames,
  };
}

function textBody(data: string): Pick<Frame, "body" | "json"> {
  try {
    const body: unknown = JSON.parse(data);
    if (typeof body === "object" && body !== null) return { body, json: true };
  } catch {
    // Not JSON: a text frame.
  }
  return { body: data, json: false };
}

/** A binary frame (base64 in the HAR): its MessagePack value when all of it decodes as a map or array, else its bytes. */
function binaryBody(base64: string): Pick<Frame, "body" | "json" | "codec" | "binary"> {
  try {
    const body: unknown = unpack(Buffer.from(base64, "base64"));
    if (typeof body === "object" && body !== null && !ArrayBuffer.isView(body)) return { body, json: true, codec: "msgpack" };
  } catch {
    // Not MessagePack (or trailing bytes): an opaque binary frame.
  }
  return { body: base64, json: false, binary: base64 };
}

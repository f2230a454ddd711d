/**
 * Engine.IO and Socket.IO framing, as it appears in a recording: `2`/`3` pings and pongs, `2probe`,
 * `5` upgrade, `40{…}` connect (with the client's auth), `42["event",{…}]` events, `43` acks;
 * polling bodies hold several packets separated by \x1e (Engine.IO 4) or length-prefixed (3).
 */

export type SocketioPacket =
  | { kind: "connect"; nsp: string; data: unknown; query?: Record<string, string> }
  | { kind: "event"; nsp: string; event: string; args: unknown[]; ackId?: number }
  | { kind: "ack"; nsp: string; ackId: number; args: unknown[] }
  | { kind: "connect_error"; nsp: string; data: unknown }
  | { kind: "binary"; nsp: string }
  | { kind: "other" };

/** One Engine.IO packet's Socket.IO content; pings, probes, upgrades and opens are `other`. */
export function decodeEnginePacket(text: string): SocketioPacket {
  if (!text.startsWith("4") || text.length < 2) return { kind: "other" };
  return decodeSocketioPacket(text.slice(1));
}

export function decodeSocketioPacket(text: string): SocketioPacket {
  const type = text[0];
  let i = 1;
  if (type === "5" || type === "6") {
    // Binary events carry their attachments in separate frames: not rebuildable from text.
    return { kind: "binary", nsp: "/" };
  }
  let nsp = "/";
  if (text[i] === "/") {
    const comma = text.indexOf(",", i);
    const end = comma === -1 ? text.length : comma;
    nsp = text.slice(i, end);
    i = comma === -1 ? text.length : comma + 1;
  }
  // Socket.IO 2 sends a namespace's query in its connect packet: `40/chat?token=x,`.
  const q = nsp.indexOf("?");
  const query = q === -1 ? undefined : Object.fromEntries(new URLSearchParams(nsp.slice(q + 1)));
  if (q !== -1) nsp = nsp.slice(0, q);
  let digits = "";
  while (i < text.length && text[i]! >= "0" && text[i]! <= "9") digits += text[i++];
  const rest = text.slice(i);
  let data: unknown;
  try {
    data = rest === "" ? undefined : JSON.parse(rest);
  } catch {
    return { kind: "other" };
  }
  const ackId = digits === "" ? undefined : Number(digits);
  switch (type) {
    case "0":
      return { kind: "connect", nsp, data, ...(query ? { query } : {}) };
    case "2":
      if (!Array.isArray(data) || typeof data[0] !== "string") return { kind: "other" };
      return { kind: "event", nsp, event: data[0], args: data.slice(1), ...(ackId !== undefined ? { ackId } : {}) };
    case "3":
      return ackId === undefined ? { kind: "other" } : { kind: "ack", nsp, ackId, args: Array.isArray(data) ? data : [] };
    case "4":
      return { kind: "connect_error", nsp, data };
    default:
      return { kind: "other" };
  }
}

/** The Engine.IO packets of a polling request or response body. */
export function splitPollingPayload(body: string): string[] {
  if (body.includes("\x1e")) return body.split("\x1e");
  // Engine.IO 3 (Socket.IO 2): `<length>:<packet>` repeated.
  const packets: string[] = [];
  let i = 0;
  while (i < body.length) {
    const colon = body.indexOf(":", i);
    const length = colon === -1 ? NaN : Number(body.slice(i, colon));
    if (!Number.isInteger(length) || length < 0) return packets.length > 0 ? packets : [body];
    packets.push(body.slice(colon + 1, colon + 1 + length));
    i = colon + 1 + length;
  }
  return packets;
}

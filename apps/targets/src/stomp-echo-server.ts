import { createServer, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { EchoHold, parseDelay, type HoldQueue } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { serializeFrame, StompFrameError, StompParser, type StompFrame } from "./stomp-frame";

export const STOMP_PATH = "/stomp";
/** SEND here with a `reply-to` header: the body comes back, held, to that destination. */
export const STOMP_ECHO_DESTINATION = "/queue/echo";
/** `/topic/<room>`: a message reaches every OTHER subscriber (group semantics, as RoomHub). */
export const STOMP_ROOM_PREFIX = "/topic/";
/** The shortest heart-beat interval the broker sends or asks for, in ms. */
const HEARTBEAT_MS = 100;

interface Session {
  ws: WebSocket;
  /** subscription id → destination */
  subs: Map<string, string>;
  replies: HoldQueue<{ to: string; body: Buffer; binary: boolean; headers: Record<string, string> }>;
  connected: boolean;
  lastHeard: number;
  timers: NodeJS.Timeout[];
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * A small STOMP 1.2 broker over WebSocket at `/stomp` (subprotocols v12.stomp, v11.stomp,
 * v10.stomp): CONNECT/STOMP → CONNECTED with negotiated heart-beats, SUBSCRIBE/UNSUBSCRIBE, SEND →
 * MESSAGE to the destination's subscribers, RECEIPT for any frame asking for one, DISCONNECT, and
 * ERROR (then close) on a malformed or out-of-order frame. Two reference behaviours on top:
 * `/queue/echo` with `reply-to` is the exact-hold echo (per connection, `?delay=<ms>`), and
 * `/topic/<room>` delivers to every subscriber but the sender.
 */
export async function startStompEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const sessions = new Set<Session>();
  let nextMessageId = 0;

  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (offered) => ["v12.stomp", "v11.stomp", "v10.stomp"].find((p) => offered.has(p)) ?? false,
  });

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== STOMP_PATH) return rejectUpgrade(socket, 404, "Not Found");
    const delay = parseDelay(url.searchParams.get("delay"), delayMs);
    if (delay === undefined) return rejectUpgrade(socket, 400, "Bad Request");
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, delay));
  });

  function write(s: Session, frame: Buffer, binary: boolean): void {
    if (s.ws.readyState === s.ws.OPEN) s.ws.send(frame, { binary });
  }

  /** MESSAGE to every subscription on `destination`, skipping `except`'s session. */
  function deliver(destination: string, body: Buffer, binary: boolean, headers: Record<string, string>, except?: Session): void {
    for (const s of sessions) {
      if (s === except || !s.connected) continue;
      for (const [id, dest] of s.subs) {
        if (dest !== destination) continue;
        const h: Record<string, string> = { destination, "message-id": String(nextMessageId++), subscription: id };
        if (headers["content-type"]) h["content-type"] = headers["content-type"];
        write(s, serializeFrame("MESSAGE", h, body), binary);
      }
    }
  }

  function serve(ws: WebSocket, delay: number): void {
    const parser = new StompParser();
    const session: Session = {
      ws,
      subs: new Map(),
      connected: false,
      lastHeard: Date.now(),
      timers: [],
      replies: hold.queue(delay, ({ to, body, binary, headers }) => deliver(to, body, binary, headers)),
    };
    sessions.add(session);

    const fail = (message: string, detail = "") => {
      write(session, serializeFrame("ERROR", { message, "content-type": "text/plain" }, Buffer.from(detail)), false);
      ws.close(1002, message.slice(0, 120));
    };
    const receipt = (frame: StompFrame) => {
      const id = frame.headers.receipt;
      if (id !== undefined) write(session, serializeFrame("RECEIPT", { "receipt-id": id }), false);
    };

    const onFrame = (frame: StompFrame, binary: boolean): boolean => {
      const h = frame.headers;
      if (!session.connected) {
        if (frame.command !== "CONNECT" && frame.command !== "STOMP") {
          fail("not connected", `${frame.command} before CONNECT`);
          return false;
        }
        const [cx = 0, cy = 0] = (h["heart-beat"] ?? "0,0").split(",").map(Number);
        if (!Number.isFinite(cx) || !Number.isFinite(cy)) {
          fail("invalid heart-beat header", h["heart-beat"]);
          return false;
        }
        session.connected = true;
        write(session, serializeFrame("CONNECTED", { version: "1.2", "heart-beat": `${HEARTBEAT_MS},${HEARTBEAT_MS}`, server: "volley-stomp/1" }), false);
        // Client wants beats every cy: send every max(cy, ours). Client sends every max(cx, ours):
        // silent for twice that is a dead peer.
        if (cy > 0) session.timers.push(setInterval(() => write(session, Buffer.from("\n"), false), Math.max(cy, HEARTBEAT_MS)));
        if (cx > 0) {
          const limit = 2 * Math.max(cx, HEARTBEAT_MS);
          session.timers.push(
            setInterval(() => {
              if (Date.now() - session.lastHeard > limit) fail("heart-beat timeout", `nothing heard for ${limit} ms`);
            }, limit / 2),
          );
        }
        return true;
      }
      switch (frame.command) {
        case "SUBSCRIBE":
          if (!h.destination || h.id === undefined) {
            fail("SUBSCRIBE needs destination and id headers");
            return false;
          }
          session.subs.set(h.id, h.destination);
          break;
        case "UNSUBSCRIBE":
          if (h.id === undefined || !session.subs.delete(h.id)) {
            fail("UNSUBSCRIBE of an unknown subscription", `id ${h.id ?? "(missing)"}`);
            return false;
          }
          break;
        case "SEND":
          if (!h.destination) {
            fail("SEND needs a destination header");
            return false;
          }
          if (h.destination === STOMP_ECHO_DESTINATION) {
            if (!h["reply-to"]) {
              fail(`SEND to ${STOMP_ECHO_DESTINATION} needs a reply-to header`);
              return false;
            }
            session.replies.push({ to: h["reply-to"], body: frame.body, binary, headers: h });
          } else {
            const except = h.destination.startsWith(STOMP_ROOM_PREFIX) ? session : undefined;
            deliver(h.destination, frame.body, binary, h, except);
          }
          break;
        case "DISCONNECT":
          receipt(frame);
          ws.close(1000);
          return false;
        case "ACK":
        case "NACK":
        case "BEGIN":
        case "COMMIT":
        case "ABORT":
          break;
        default:
          fail(`unknown command ${frame.command}`);
          return false;
      }
      receipt(frame);
      return true;
    };

    ws.on("error", () => ws.terminate());
    ws.on("message", (data: RawData, isBinary: boolean) => {
      session.lastHeard = Date.now();
      let frames: StompFrame[];
      try {
        frames = parser.push(data as Buffer);
      } catch (err) {
        fail("malformed frame", err instanceof StompFrameError ? err.message : String(err));
        return;
      }
      for (const f of frames) if (!onFrame(f, isBinary)) return;
    });
    ws.on("close", () => {
      sessions.delete(session);
      session.replies.dispose();
      for (const t of session.timers) clearInterval(t);
    });
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${STOMP_PATH}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => sessions.size,
    async close() {
      hold.clear();
      for (const s of sessions) for (const t of s.timers) clearInterval(t);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}

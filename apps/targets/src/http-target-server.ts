import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { EchoHold, parseDelay, type HoldQueue } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { RoomHub } from "./room-hub";

export const HTTP_PATHS = {
  /** Any method: the request body comes back as the response body after the hold. */
  echo: "/echo",
  /** GET: an event stream; its first event (`event: session`) names the session to POST to. */
  sse: "/sse",
  sseSend: "/sse/send",
  /** POST: opens a polling session, answers `{"session": "<id>"}`. */
  pollOpen: "/poll/open",
  pollSend: "/poll/send",
  /** GET ?session=&wait=<ms>: `{"messages": ["<base64>", ...]}`, held up to `wait` while empty. */
  pollReceive: "/poll/receive",
  pollClose: "/poll/close",
} as const;

const MAX_BODY = 1_048_576;
const MAX_WAIT_MS = 60_000;
/** A polling session nobody polled for this long is dropped, as a real server would. */
const IDLE_MS = 60_000;

export interface HttpTargetServer extends EchoServer {
  /** `http://host:port`; the routes are under HTTP_PATHS. */
  url: string;
}

interface Session {
  id: string;
  room: string | undefined;
  replies: HoldQueue<Buffer>;
  /** Hands one outgoing message to the session's transport. */
  push(msg: Buffer): void;
  end(): void;
}

class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function reply(res: ServerResponse, status: number, body?: unknown): void {
  if (res.headersSent || res.destroyed) return;
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = typeof body === "string" ? `${body}\n` : JSON.stringify(body);
  res.writeHead(status, { "content-type": typeof body === "string" ? "text/plain" : "application/json" }).end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new BadRequest(413, `body over ${MAX_BODY} bytes`));
      else chunks.push(c);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function roomOf(params: URLSearchParams): string | undefined {
  const room = params.get("room");
  if (room === null) return undefined;
  if (room.length === 0 || room.length > 200) throw new BadRequest(400, "invalid room: use ?room=<1 to 200 characters>");
  return room;
}

/**
 * The HTTP-family reference target, one server for every protocol without an upgrade: plain
 * request/response (`/echo`), SSE with POST to publish, and long and short polling. Every echo
 * keeps the exact-hold discipline (per session or, for `/echo`, per TCP connection: in order,
 * never early). `?delay=<ms>` overrides the server's delay; `?room=<name>` on the SSE stream or
 * the polling open joins a room whose messages reach every other member instead of the sender.
 * Binary messages travel as base64 on the event stream and in poll answers (both are text).
 */
export async function startHttpTargetServer(options: EchoServerOptions = {}): Promise<HttpTargetServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const sessions = new Map<string, Session>();
  const rooms = new RoomHub<Session>();
  const echoQueues = new WeakMap<Socket, HoldQueue<{ res: ServerResponse; body: Buffer }>>();

  function delayOf(params: URLSearchParams): number {
    const delay = parseDelay(params.get("delay"), delayMs);
    if (delay === undefined) throw new BadRequest(400, "invalid delay: use ?delay=<ms>");
    return delay;
  }

  function addSession(params: URLSearchParams, push: (msg: Buffer) => void, end: () => void): Session {
    const delay = delayOf(params);
    const room = roomOf(params);
    const id = randomUUID();
    const session: Session = { id, room, replies: hold.queue<Buffer>(delay, (m) => session.push(m)), push, end };
    sessions.set(id, session);
    if (room) rooms.join(room, session);
    return session;
  }

  function dropSession(session: Session): void {
    if (!sessions.delete(session.id)) return;
    session.replies.dispose();
    if (session.room) rooms.leave(session.room, session);
    session.end();
  }

  function sessionOf(params: URLSearchParams): Session {
    const session = sessions.get(params.get("session") ?? "");
    if (!session) throw new BadRequest(404, "unknown session: open one first");
    return session;
  }

  function openSse(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): void {
    const session = addSession(
      params,
      (msg) => res.write(`data: ${msg.toString("base64")}\n\n`),
      () => res.end(),
    );
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
    res.write(`event: session\ndata: ${session.id}\n\n`);
    req.socket.setNoDelay(true);
    res.on("close", () => dropSession(session));
  }

  interface Mailbox {
    messages: string[];
    waiting: { res: ServerResponse; timer: NodeJS.Timeout } | undefined;
    lastPoll: number;
  }
  const mailboxes = new Map<string, Mailbox>();

  function flush(box: Mailbox): void {
    const w = box.waiting;
    if (!w) return;
    box.waiting = undefined;
    clearTimeout(w.timer);
    reply(w.res, 200, { messages: box.messages.splice(0) });
  }

  function openPoll(res: ServerResponse, params: URLSearchParams): void {
    const box: Mailbox = { messages: [], waiting: undefined, lastPoll: Date.now() };
    const session = addSession(
      params,
      (msg) => {
        box.messages.push(msg.toString("base64"));
        flush(box);
      },
      () => {
        mailboxes.delete(session.id);
        if (box.waiting) {
          clearTimeout(box.waiting.timer);
          reply(box.waiting.res, 410, "session closed");
        }
      },
    );
    mailboxes.set(session.id, box);
    reply(res, 200, { session: session.id });
  }

  function receive(res: ServerResponse, params: URLSearchParams): void {
    const session = sessionOf(params);
    const box = mailboxes.get(session.id);
    if (!box) throw new BadRequest(400, "not a polling session");
    const wait = parseDelay(params.get("wait"), 0);
    if (wait === undefined || wait > MAX_WAIT_MS) throw new BadRequest(400, `invalid wait: use ?wait=<0 to ${MAX_WAIT_MS} ms>`);
    box.lastPoll = Date.now();
    if (box.waiting) flush(box); // one poll at a time: an older one answers now
    if (box.messages.length > 0 || wait === 0) return reply(res, 200, { messages: box.messages.splice(0) });
    box.waiting = { res, timer: setTimeout(() => flush(box), wait) };
    res.on("close", () => {
      if (box.waiting?.res !== res) return;
      clearTimeout(box.waiting.timer);
      box.waiting = undefined;
    });
  }

  async function send(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): Promise<void> {
    const session = sessionOf(params);
    const body = await readBody(req);
    if (session.room) rooms.publish(session.room, session, (m) => m.push(body));
    else session.replies.push(body);
    reply(res, 204);
  }

  async function echo(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): Promise<void> {
    const delay = delayOf(params);
    const body = await readBody(req);
    // Per TCP connection, so a keep-alive client sees its replies in order, each held exactly.
    let queue = echoQueues.get(req.socket);
    if (!queue) {
      queue = hold.queue(delay, ({ res: r, body: b }) => {
        if (r.destroyed) return;
        r.writeHead(200, { "content-type": "application/octet-stream", "content-length": b.length }).end(b);
      });
      echoQueues.set(req.socket, queue);
      const q = queue;
      req.socket.once("close", () => q.dispose());
    }
    queue.push({ res, body });
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const p = url.searchParams;
    const method = req.method ?? "GET";
    const only = (m: string) => {
      if (method !== m) throw new BadRequest(405, `use ${m} on ${url.pathname}`);
    };
    switch (url.pathname) {
      case HTTP_PATHS.echo:
        return echo(req, res, p);
      case HTTP_PATHS.sse:
        only("GET");
        return openSse(req, res, p);
      case HTTP_PATHS.sseSend:
      case HTTP_PATHS.pollSend:
        only("POST");
        return send(req, res, p);
      case HTTP_PATHS.pollOpen:
        only("POST");
        return openPoll(res, p);
      case HTTP_PATHS.pollReceive:
        only("GET");
        return receive(res, p);
      case HTTP_PATHS.pollClose:
        only("POST");
        dropSession(sessionOf(p));
        return reply(res, 204);
      default:
        throw new BadRequest(404, "not found");
    }
  }

  const http = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof BadRequest) reply(res, err.status, err.message);
      else if (!res.destroyed) reply(res, 500, "internal error");
    });
  });
  // Many short requests per connection: Nagle would add its delay to every reply.
  http.on("connection", (socket: Socket) => socket.setNoDelay(true));

  const sweep = setInterval(() => {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, box] of mailboxes) if (!box.waiting && box.lastPoll < cutoff) dropSession(sessions.get(id)!);
  }, 10_000);
  sweep.unref();

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => sessions.size,
    async close() {
      clearInterval(sweep);
      hold.clear();
      for (const s of [...sessions.values()]) dropSession(s);
      rooms.clear();
      await closeHttp(http);
    },
  };
}

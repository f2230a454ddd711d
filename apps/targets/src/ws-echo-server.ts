import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";

export interface WsEchoServerOptions {
  /** 0 picks a free port (tests). */
  port?: number;
  host?: string;
  /** Default reply delay for every message; a connection may override it with `?delay=<ms>`. */
  delayMs?: number;
}

export interface WsEchoServer {
  port: number;
  /** ws://host:port/echo */
  url: string;
  /**
   * Holds every reply (new and already delayed ones) until `ms` from now, then releases them in
   * order. Lets tests show that a stalling server shows up in tail latency (coordinated omission).
   */
  stall(ms: number): void;
  /** Number of open client connections. */
  connections(): number;
  /** Terminates clients, drops pending replies and closes the listener. */
  close(): Promise<void>;
}

export const ECHO_PATH = "/echo";

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function parseDelay(raw: string | null, fallback: number): number | undefined {
  if (raw === null) return fallback;
  const n = Number(raw);
  return raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

function formatUrl(host: string, port: number): string {
  const shown = host.includes(":") ? `[${host}]` : host;
  return `ws://${shown}:${port}${ECHO_PATH}`;
}

/** A WebSocket echo at `/echo`: every frame comes back unchanged (text as text, binary as binary). */
export async function startWsEchoServer(options: WsEchoServerOptions = {}): Promise<WsEchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const pending = new Set<NodeJS.Timeout>();
  let stalledUntil = 0;

  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    res.writeHead(path === ECHO_PATH ? 426 : 404, { "content-type": "text/plain" });
    res.end(path === ECHO_PATH ? "use a WebSocket client\n" : "not found\n");
  });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== ECHO_PATH) return rejectUpgrade(socket, 404, "Not Found");
    const delay = parseDelay(url.searchParams.get("delay"), delayMs);
    if (delay === undefined) return rejectUpgrade(socket, 400, "Bad Request");
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, delay));
  });

  function serve(ws: WebSocket, delay: number): void {
    // A client that vanishes mid-send must not take the server down with it.
    ws.on("error", () => ws.terminate());
    // Replies leave in arrival order, each no sooner than `delay` after its message arrived.
    const queue: Array<{ due: number; data: RawData; isBinary: boolean }> = [];
    let timer: NodeJS.Timeout | undefined;

    const pump = () => {
      if (timer) pending.delete(timer);
      timer = undefined;
      const now = performance.now();
      const stalledFor = stalledUntil - Date.now();
      while (queue.length > 0 && stalledFor <= 0 && queue[0]!.due <= now) {
        const { data, isBinary } = queue.shift()!;
        if (ws.readyState === ws.OPEN) ws.send(data, { binary: isBinary });
      }
      if (queue.length === 0) return;
      // Node's timers run off a cached millisecond loop time and can fire up to ~1 ms early; a
      // reference server whose hold time is the ground truth of latency tests must never be early,
      // so pump re-checks the monotonic clock and re-arms.
      const wait = Math.max(queue[0]!.due - now, stalledFor);
      timer = setTimeout(pump, Math.max(1, Math.ceil(wait)));
      pending.add(timer);
    };

    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (delay <= 0 && queue.length === 0 && stalledUntil <= Date.now()) {
        ws.send(data, { binary: isBinary });
        return;
      }
      queue.push({ due: performance.now() + delay, data, isBinary });
      if (timer === undefined) pump();
    });
    ws.on("close", () => {
      if (timer) {
        clearTimeout(timer);
        pending.delete(timer);
      }
      queue.length = 0;
    });
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const actualPort = (http.address() as AddressInfo).port;

  return {
    port: actualPort,
    url: formatUrl(host, actualPort),
    stall(ms: number) {
      stalledUntil = Math.max(stalledUntil, Date.now() + ms);
    },
    connections: () => wss.clients.size,
    async close() {
      for (const t of pending) clearTimeout(t);
      pending.clear();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

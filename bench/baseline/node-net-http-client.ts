/**
 * The Node runtime's floor for bench/http-nginx.ts: the least a Node client can do for the same
 * job, on `node:net` alone — a closed loop of N users sending `GET <path>`, each waiting for its
 * response before the next. `keep-alive`: one socket per user, the request bytes built once; `close`:
 * a new connection per request (`Connection: close`), as ab does. Responses are counted only when
 * whole (status line 200, header end, Content-Length bytes of body), so a short read or an error
 * page is not a request done. No histogram, no schedule, no frames: what is left is what Node's
 * sockets cost, the line under which no Node client (the agent included) can go on this machine.
 *
 * Prints one JSON line `{ requests, failed, rps, cpuSeconds }`: its own CPU (process.cpuUsage)
 * from just before the first connect to the last response, the same window the agent reports.
 *
 *   node --import tsx bench/baseline/node-net-http-client.ts <url> <users> <requests> <keep-alive|close>
 */
import net from "node:net";

const [urlArg = "http://127.0.0.1:8080/hello", usersArg = "50", requestsArg = "100000", mode = "keep-alive"] = process.argv.slice(2);
if (mode !== "keep-alive" && mode !== "close") throw new Error(`mode must be keep-alive or close (got ${mode})`);
const url = new URL(urlArg);
const users = Number(usersArg);
const total = Number(requestsArg);
const port = Number(url.port || 80);
const request = Buffer.from(
  `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${mode === "close" ? "connection: close\r\n" : ""}\r\n`,
  "latin1",
);
const HEAD_END = Buffer.from("\r\n\r\n");
const OK = Buffer.from("HTTP/1.1 200 ");

let started = 0;
let done = 0;
let failed = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();

function finish(): void {
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ requests: done, failed, rps: Math.round(done / seconds), cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
  process.exit(0);
}

/** Responses read off one socket: a head is parsed once whole, its body skipped by length. */
class Reader {
  private pending: Buffer | undefined;
  private body = 0;
  constructor(private readonly onResponse: (ok: boolean) => void) {}

  feed(chunk: Buffer): void {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    for (;;) {
      if (this.body > 0) {
        const take = Math.min(this.body, data.length);
        this.body -= take;
        data = data.subarray(take);
        if (this.body > 0) return;
        this.onResponse(true);
      }
      if (data.length === 0) return;
      const end = data.indexOf(HEAD_END);
      if (end < 0) {
        this.pending = Buffer.from(data);
        return;
      }
      const head = data.toString("latin1", 0, end);
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? Number.NaN);
      const ok = data.subarray(0, OK.length).equals(OK) && Number.isFinite(length);
      data = data.subarray(end + 4);
      if (!ok) {
        this.onResponse(false);
        return;
      }
      this.body = length;
      if (length === 0) this.onResponse(true);
    }
  }
}

function answered(ok: boolean): void {
  if (ok) done++;
  else failed++;
  if (done + failed >= total) finish();
}

function keepAliveUser(): void {
  const socket = net.connect({ host: url.hostname, port, noDelay: true });
  const next = () => {
    if (started >= total) return;
    started++;
    socket.write(request);
  };
  const reader = new Reader((ok) => {
    answered(ok);
    next();
  });
  socket.on("connect", next);
  socket.on("data", (d: Buffer) => reader.feed(d));
  socket.on("error", (err) => {
    console.error(`socket error: ${err.message}`);
    process.exit(1);
  });
}

function closeUser(): void {
  if (started >= total) return;
  started++;
  const socket = net.connect({ host: url.hostname, port, noDelay: true });
  let ok: boolean | undefined;
  const reader = new Reader((r) => {
    ok ??= r;
  });
  socket.on("connect", () => socket.write(request));
  socket.on("data", (d: Buffer) => reader.feed(d));
  socket.on("error", () => {});
  socket.on("close", () => {
    answered(ok === true);
    closeUser();
  });
}

for (let i = 0; i < users; i++) (mode === "keep-alive" ? keepAliveUser : closeUser)();

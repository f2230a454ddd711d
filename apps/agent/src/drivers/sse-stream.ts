import type { Pool } from "undici";
import type { Readable } from "node:stream";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection } from "./driver";
import { connectionPool } from "./connection-pool";
import { classifyHttpError, pathOf, redirectDetail, withHeaders } from "./http-common";

type EventCb = (event: string | undefined, data: unknown) => void;

/**
 * Splits an event stream (text/event-stream, the HTML Living Standard's format) into events: `event:`
 * names the type ("message" when absent), `data:` lines join with "\n", a blank line dispatches,
 * `:` lines are comments (keepalives). `id:` and `retry:` only matter to a reconnecting client,
 * and a load test counts a dropped stream instead of reconnecting.
 */
export class SseParser {
  private buffer = "";
  private type = "";
  private data: string[] = [];
  /** The previous chunk ended in \r: a \n starting this one belongs to that line break. */
  private skipLf = false;

  constructor(private readonly dispatch: (type: string, data: string) => void) {}

  feed(chunk: string): void {
    if (this.skipLf && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.skipLf = false;
    let text = this.buffer + chunk;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(text.slice(start, i));
      if (c === 13) {
        if (i + 1 === text.length) this.skipLf = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    text = text.slice(start);
    this.buffer = text;
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.dispatch(this.type || "message", this.data.join("\n"));
      this.type = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
  }
}

/**
 * Flows: any event stream as the application serves it — a GET of the URL (with the flow's query,
 * headers and cookies), every event handed to the flow with its type. Nothing goes to the server
 * on the stream: a flow publishes by its messages' HTTP requests.
 */
class SseStreamConnection extends ConnectionBase {
  private eventCb: EventCb | undefined;
  /** One parser for the stream's life: a handler swapped mid-event (setup → engine) loses nothing. */
  private readonly parser = new SseParser((type, data) => this.eventCb!(type, data));

  constructor(
    private readonly pool: Pool,
    private readonly body: Readable,
  ) {
    super();
    body.setEncoding("utf8");
    body.on("end", () => this.end("closed", "the server ended the stream"));
    body.on("error", (err) => {
      if (this.closingByUs) return;
      const { errorClass, detail } = classifyHttpError(err);
      this.end(errorClass, detail);
    });
  }

  send(): void {
    this.messageError("other", "an event stream carries nothing to the server: give the flow's messages a request");
  }

  /** The stream flows from the moment the flow listens, so no event is read before it has a handler. */
  override onEvent(cb: EventCb): void {
    const first = this.eventCb === undefined;
    this.eventCb = cb;
    if (first) this.body.on("data", (chunk: string) => this.parser.feed(chunk));
  }

  private end(errorClass: ErrorClass, reason: string): void {
    void this.pool.destroy().catch(() => {});
    this.ended({ reason }, errorClass);
  }

  protected shutdown(): void {
    this.body.destroy();
    void this.pool.destroy().catch(() => {});
    this.ended({ reason: "closed by the client" });
  }
}

/** Opens the stream; resolves once the server answered 200 with text/event-stream. */
export async function connectSseStream(opts: ConnectOptions): Promise<Connection> {
  const url = new URL(opts.url);
  const pool = connectionPool(opts, 1);
  // Only the answer is timed: a signal still armed after it would abort the stream's body later.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), opts.connectTimeoutMs);
  try {
    const res = await pool.request({
      method: "GET",
      path: pathOf(url),
      headers: withHeaders(opts, { accept: "text/event-stream", "cache-control": "no-cache" }),
      signal: timeout.signal,
    });
    clearTimeout(timer);
    const type = String(res.headers["content-type"] ?? "");
    if (res.statusCode !== 200 || !type.startsWith("text/event-stream")) {
      const text = await res.body.text().catch(() => "");
      const why =
        redirectDetail(res.statusCode, res.headers.location) ??
        (res.statusCode !== 200 ? `HTTP ${res.statusCode}` : `content-type ${type || "(none)"}, not text/event-stream`);
      throw new ConnectError("handshake", `${why}${text ? `: ${text.slice(0, 200)}` : ""}`);
    }
    return new SseStreamConnection(pool, res.body);
  } catch (err) {
    clearTimeout(timer);
    void pool.destroy().catch(() => {});
    if (err instanceof ConnectError) throw err;
    if (timeout.signal.aborted) throw new ConnectError("timeout", `no answer in ${opts.connectTimeoutMs} ms`);
    const { errorClass, detail } = classifyHttpError(err);
    throw new ConnectError(errorClass, detail);
  }
}

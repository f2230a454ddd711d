const CR = 13;
const LF = 10;
const HEADER_END = Buffer.from("\r\n\r\n");

/** Parse states: the head, a body of known length, chunk sizes and data, the close. */
const enum State {
  Head,
  Body,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
}

/**
 * HTTP/1.1 responses read off a kept-alive socket one after another, with the least work a load
 * generator needs: each response's status, where it ends (Content-Length, chunked, or the close),
 * and whether the server will close after it. Bodies are skipped, never copied; only a head split
 * across reads is buffered. `onResponse` is called once per complete response, in order.
 */
export class ResponseParser {
  private state = State.Head;
  private head: Buffer | undefined;
  private status = 0;
  private closeAfter = false;
  /** The server's `Keep-Alive: timeout=N` hint, ms; -1 without one. */
  private keepAliveMs = -1;
  private remaining = 0;
  /** A chunk-size line or trailer line split across reads. */
  private line = "";
  /**
   * The last head parsed, its bytes and what it read as: a server answers the same request with
   * the same head (nginx's differ once a second, by Date), so a head equal to it byte for byte is
   * read by one compare instead of a string, its lower-case copy and four regular expressions.
   */
  private lastHead: Buffer | undefined;
  private lastNoBody = false;
  private lastRead = { state: State.Head, status: 0, closeAfter: false, keepAliveMs: -1, remaining: 0 };

  constructor(private readonly onResponse: (status: number, closeAfter: boolean, keepAliveMs: number) => void) {}

  /** `noBody`: the response in turn answers a HEAD request. Returns false on a malformed response. */
  feed(data: Buffer, noBody: () => boolean): boolean {
    let at = 0;
    while (at < data.length) {
      switch (this.state) {
        case State.Head: {
          // A head split across reads is joined; otherwise it is read where it lies, from `at`.
          const buf = this.head ? Buffer.concat([this.head, data.subarray(at)]) : data;
          const from = this.head ? 0 : at;
          const end = buf.indexOf(HEADER_END, from);
          if (end < 0) {
            this.head = Buffer.from(buf.subarray(from));
            if (this.head.length > 65_536) return false;
            return true;
          }
          const consumed = this.head ? end + 4 - this.head.length : end + 4 - at;
          this.head = undefined;
          if (!this.headAt(buf, from, end, noBody())) return false;
          at += consumed;
          if (this.state === State.Head) this.complete();
          break;
        }
        case State.Body: {
          const take = Math.min(this.remaining, data.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.complete();
          break;
        }
        case State.ChunkSize:
        case State.Trailers: {
          const nl = data.indexOf(LF, at);
          if (nl < 0) {
            this.line += data.toString("latin1", at);
            if (this.line.length > 4096) return false;
            return true;
          }
          const line = (this.line + data.toString("latin1", at, nl > at && data[nl - 1] === CR ? nl - 1 : nl)).replace(/\r$/, "");
          this.line = "";
          at = nl + 1;
          if (this.state === State.Trailers) {
            if (line === "") this.complete();
            break;
          }
          const size = Number.parseInt(line, 16);
          if (!Number.isFinite(size) || size < 0) return false;
          if (size === 0) this.state = State.Trailers;
          else {
            this.remaining = size;
            this.state = State.ChunkData;
          }
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, data.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) {
            this.remaining = 2; // the CRLF after the data
            this.state = State.ChunkDataEnd;
          }
          break;
        }
        case State.ChunkDataEnd: {
          const take = Math.min(this.remaining, data.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.state = State.ChunkSize;
          break;
        }
        case State.UntilClose:
          return true;
      }
    }
    return true;
  }

  /** The socket closed: a response that runs to the close is complete; true when one was. */
  closed(): boolean {
    if (this.state !== State.UntilClose) return false;
    this.complete();
    return true;
  }

  /** True while a response has begun and not ended. */
  get midResponse(): boolean {
    return this.state !== State.Head || this.head !== undefined;
  }

  /** Reads the head in buf[from, end) (its blank line excluded): as the last one read, when it is the same bytes. */
  private headAt(buf: Buffer, from: number, end: number, noBody: boolean): boolean {
    const last = this.lastHead;
    const r = this.lastRead;
    if (last !== undefined && noBody === this.lastNoBody && last.length === end - from && buf.compare(last, 0, last.length, from, end) === 0) {
      this.state = r.state;
      this.status = r.status;
      this.closeAfter = r.closeAfter;
      this.keepAliveMs = r.keepAliveMs;
      this.remaining = r.remaining;
      return true;
    }
    if (!this.readHead(buf.toString("latin1", from, end), noBody)) return false;
    this.lastHead = Buffer.from(buf.subarray(from, end));
    this.lastNoBody = noBody;
    r.state = this.state;
    r.status = this.status;
    r.closeAfter = this.closeAfter;
    r.keepAliveMs = this.keepAliveMs;
    r.remaining = this.remaining;
    return true;
  }

  private readHead(text: string, noBody: boolean): boolean {
    if (!text.startsWith("HTTP/1.")) return false;
    this.status = Number(text.slice(9, 12));
    if (!(this.status >= 100 && this.status < 600)) return false;
    const lower = text.toLowerCase();
    const connection = /\r\nconnection:[ \t]*([^\r]*)/.exec(lower)?.[1];
    this.closeAfter = connection !== undefined ? connection.includes("close") : text.startsWith("HTTP/1.0");
    const hint = /\r\nkeep-alive:[^\r]*timeout=(\d+)/.exec(lower);
    this.keepAliveMs = hint ? Number(hint[1]) * 1000 : -1;
    if (this.status >= 100 && this.status < 200) {
      // 1xx (100 Continue): an interim head; the real response follows.
      this.state = State.Head;
      this.status = -1;
      return true;
    }
    if (noBody || this.status === 204 || this.status === 304) {
      this.state = State.Head;
      return true;
    }
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
      this.state = State.ChunkSize;
      return true;
    }
    const cl = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
    if (cl) {
      this.remaining = Number(cl[1]);
      this.state = this.remaining > 0 ? State.Body : State.Head;
      return true;
    }
    this.closeAfter = true;
    this.state = State.UntilClose;
    return true;
  }

  private complete(): void {
    this.state = State.Head;
    if (this.status === -1) return; // an interim 1xx head
    this.onResponse(this.status, this.closeAfter, this.keepAliveMs);
  }
}

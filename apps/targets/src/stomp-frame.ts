/**
 * STOMP 1.2 frames (https://stomp.github.io/stomp-specification-1.2.html): parse a byte stream
 * into frames, heart-beats (bare EOLs) skipped, and serialize frames with header escaping.
 */
export interface StompFrame {
  command: string;
  headers: Record<string, string>;
  body: Buffer;
}

export class StompFrameError extends Error {}

const NUL = 0;
const LF = 0x0a;
const CR = 0x0d;
/** CONNECT and CONNECTED headers are not escaped (spec: for 1.0 compatibility). */
const RAW_HEADER_COMMANDS = new Set(["CONNECT", "CONNECTED"]);
const MAX_FRAME = 2 * 1_048_576;

function unescapeHeader(value: string): string {
  return value.replace(/\\(.)/g, (_m, c: string) => {
    if (c === "n") return "\n";
    if (c === "r") return "\r";
    if (c === "c") return ":";
    if (c === "\\") return "\\";
    throw new StompFrameError(`undefined escape sequence \\${c} in a header`);
  });
}

function escapeHeader(value: string): string {
  return value.replace(/[\\\r\n:]/g, (c) => ({ "\\": "\\\\", "\r": "\\r", "\n": "\\n", ":": "\\c" })[c]!);
}

/** Incremental parser: feed it whatever arrived, get the complete frames back. */
export class StompParser {
  private buf: Buffer = Buffer.alloc(0);

  /** Returns the complete frames in `chunk` (and earlier leftovers); throws StompFrameError on a malformed frame. */
  push(chunk: Buffer): StompFrame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: StompFrame[] = [];
    for (;;) {
      let start = 0;
      while (start < this.buf.length && (this.buf[start] === LF || this.buf[start] === CR)) start++;
      if (start > 0) this.buf = this.buf.subarray(start);
      if (this.buf.length === 0) break;
      const frame = this.parseOne();
      if (!frame) break;
      frames.push(frame);
    }
    if (this.buf.length > MAX_FRAME) throw new StompFrameError(`frame over ${MAX_FRAME} bytes`);
    return frames;
  }

  private parseOne(): StompFrame | undefined {
    const buf = this.buf;
    const headerEnd = buf.indexOf("\n\n");
    const headerEndCrlf = buf.indexOf("\r\n\r\n");
    let end: number;
    let sep: number;
    if (headerEnd >= 0 && (headerEndCrlf < 0 || headerEnd < headerEndCrlf)) [end, sep] = [headerEnd, 2];
    else if (headerEndCrlf >= 0) [end, sep] = [headerEndCrlf, 4];
    else return undefined;
    const lines = buf.toString("utf8", 0, end).split(/\r?\n/);
    const command = lines.shift()!;
    if (!/^[A-Z]+$/.test(command)) throw new StompFrameError(`not a STOMP command: ${JSON.stringify(command.slice(0, 40))}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon <= 0) throw new StompFrameError(`malformed header line ${JSON.stringify(line.slice(0, 40))}`);
      const raw = RAW_HEADER_COMMANDS.has(command);
      const name = raw ? line.slice(0, colon) : unescapeHeader(line.slice(0, colon));
      // Repeated headers: the first one counts (spec 1.2).
      if (!(name in headers)) headers[name] = raw ? line.slice(colon + 1) : unescapeHeader(line.slice(colon + 1));
    }
    const bodyStart = end + sep;
    let bodyEnd: number;
    if (headers["content-length"] !== undefined) {
      const len = Number(headers["content-length"]);
      if (!Number.isInteger(len) || len < 0) throw new StompFrameError(`invalid content-length ${headers["content-length"]}`);
      if (buf.length < bodyStart + len + 1) return undefined;
      bodyEnd = bodyStart + len;
      if (buf[bodyEnd] !== NUL) throw new StompFrameError("frame body not followed by NUL");
    } else {
      bodyEnd = buf.indexOf(NUL, bodyStart);
      if (bodyEnd < 0) return undefined;
    }
    const body = Buffer.from(buf.subarray(bodyStart, bodyEnd));
    this.buf = buf.subarray(bodyEnd + 1);
    return { command, headers, body };
  }
}

/** One frame on the wire, with content-length whenever there is a body. */
export function serializeFrame(command: string, headers: Record<string, string>, body: Buffer = Buffer.alloc(0)): Buffer {
  const raw = RAW_HEADER_COMMANDS.has(command);
  let head = `${command}\n`;
  for (const [k, v] of Object.entries(headers)) head += `${raw ? k : escapeHeader(k)}:${raw ? v : escapeHeader(v)}\n`;
  if (body.length > 0 && !("content-length" in headers)) head += `content-length:${body.length}\n`;
  head += "\n";
  return Buffer.concat([Buffer.from(head, "utf8"), body, Buffer.from([NUL])]);
}

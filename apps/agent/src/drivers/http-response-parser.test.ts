import { describe, expect, it } from "vitest";
import { ResponseParser } from "./http-response-parser";

/** nginx's answer to `GET /hello` (`return 200 "hello"`), its Date at second `s`. */
const nginx = (s: number, body = "hello", extra = "") =>
  `HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Wed, 02 Dec 2026 00:36:${String(s).padStart(2, "0")} GMT\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${extra}Connection: keep-alive\r\n\r\n${body}`;

function parser() {
  const got: [number, boolean, number][] = [];
  const p = new ResponseParser((status, closeAfter, keepAliveMs) => got.push([status, closeAfter, keepAliveMs]));
  return { p, got };
}

describe("HTTP response parser", () => {
  it("reads a kept-alive socket's responses one after another, the same head again and again, in reads cut anywhere", () => {
    const stream = Buffer.from(
      [
        nginx(1),
        nginx(1),
        nginx(1),
        nginx(2),
        nginx(2, "hi!", "Keep-Alive: timeout=5\r\n"),
        nginx(2),
        "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
        nginx(3),
      ].join(""),
      "latin1",
    );
    const want = [
      [200, false, -1],
      [200, false, -1],
      [200, false, -1],
      [200, false, -1],
      [200, false, 5000],
      [200, false, -1],
      [503, false, -1],
      [200, false, -1],
    ];
    // One read, then every cut into two reads, then byte by byte.
    const whole = parser();
    expect(whole.p.feed(stream, () => false)).toBe(true);
    expect(whole.got).toEqual(want);
    for (let cut = 1; cut < stream.length; cut += 7) {
      const { p, got } = parser();
      expect(p.feed(stream.subarray(0, cut), () => false)).toBe(true);
      expect(p.feed(stream.subarray(cut), () => false)).toBe(true);
      expect(got).toEqual(want);
      expect(p.midResponse).toBe(false);
    }
    const bytes = parser();
    for (let i = 0; i < stream.length; i++) expect(bytes.p.feed(stream.subarray(i, i + 1), () => false)).toBe(true);
    expect(bytes.got).toEqual(want);
  });

  it("the same head bytes answering HEAD carry no body, answering GET their Content-Length: it is read per request, not from the last", () => {
    const { p, got } = parser();
    const head = nginx(1).slice(0, -"hello".length);
    let noBody = true;
    expect(p.feed(Buffer.from(head, "latin1"), () => noBody)).toBe(true);
    expect(got).toHaveLength(1);
    noBody = false;
    expect(p.feed(Buffer.from(head, "latin1"), () => noBody)).toBe(true);
    // The GET's body is still owed: not complete until its 5 bytes arrive.
    expect(got).toHaveLength(1);
    expect(p.midResponse).toBe(true);
    expect(p.feed(Buffer.from("hello", "latin1"), () => noBody)).toBe(true);
    expect(got).toHaveLength(2);
    noBody = true;
    expect(p.feed(Buffer.from(head, "latin1"), () => noBody)).toBe(true);
    expect(got).toHaveLength(3);
    expect(p.midResponse).toBe(false);
  });

  it("chunked bodies, Connection: close and a body to the close, repeated with the same heads", () => {
    const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    const closing = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    const { p, got } = parser();
    expect(p.feed(Buffer.from(chunked + chunked + closing + closing, "latin1"), () => false)).toBe(true);
    expect(got).toEqual([
      [200, false, -1],
      [200, false, -1],
      [200, true, -1],
      [200, true, -1],
    ]);
    const untilClose = parser();
    const toClose = "HTTP/1.0 200 OK\r\n\r\nall of it";
    expect(untilClose.p.feed(Buffer.from(toClose, "latin1"), () => false)).toBe(true);
    expect(untilClose.got).toEqual([]);
    expect(untilClose.p.closed()).toBe(true);
    expect(untilClose.got).toEqual([[200, true, -1]]);
  });

  it("refuses what is not an HTTP response", () => {
    expect(parser().p.feed(Buffer.from("SSH-2.0-OpenSSH_9.2\r\n\r\n"), () => false)).toBe(false);
    expect(parser().p.feed(Buffer.from("HTTP/1.1 999 Nope\r\n\r\n"), () => false)).toBe(false);
  });
});

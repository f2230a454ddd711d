import { serializeFrame, StompFrameError, StompParser, type StompFrame } from "./stomp-frame";

/** The transport under one STOMP session: a WebSocket, or a SockJS session (text only). */
export interface StompLink {
  /** One frame or heart-beat; `binary` only where the transport has binary frames. */
  write(data: Buffer, binary: boolean): void;
  close(code: number, reason: string): void;
}

export interface StompSession {
  readonly link: StompLink;
  /** subscription id → destination */
  readonly subs: Map<string, string>;
  connected: boolean;
  /** CONNECT's login header, once connected. */
  login?: string;
  lastHeard: number;
  timers: NodeJS.Timeout[];
}

export interface StompBrokerOptions {
  /** The shortest heart-beat interval the broker sends or asks for, in ms; 0: none either way. */
  heartbeatMs: number;
  /** CONNECTED's `server` header. */
  server: string;
  /** CONNECT's headers; a string refuses the session with that ERROR message (a bad passcode). */
  authenticate?(headers: Record<string, string>): string | undefined;
  /**
   * A SEND from a connected session. Returns an ERROR message to end the session with, or
   * nothing when handled. Absent: MESSAGE to every subscriber of the destination.
   */
  onSend?(session: StompSession, frame: StompFrame, binary: boolean): string | undefined;
  /** After a SUBSCRIBE (and its RECEIPT): Spring's @SubscribeMapping answers the subscriber at once. */
  onSubscribed?(session: StompSession, id: string, destination: string): void;
  onClose?(session: StompSession): void;
}

/** What a broker saw and wrote, for the apps' `GET /stats`. */
export interface StompBrokerCounters {
  /** Frames received (every command, CONNECT included). */
  frames: number;
  /** Heart-beats received (a bare EOL between frames). */
  heartbeatsReceived: number;
  heartbeatsSent: number;
  /** MESSAGE frames written to subscribers. */
  messages: number;
  receipts: number;
  errors: number;
}

/**
 * STOMP 1.2 broker behaviour over any transport (stomp-echo-server.ts over WebSocket and SockJS,
 * apps/stomp-sockjs-chat.ts): CONNECT/STOMP → CONNECTED with negotiated heart-beats both ways,
 * SUBSCRIBE/UNSUBSCRIBE, SEND → MESSAGE to the destination's subscribers (or the app's own
 * handler), RECEIPT for any frame asking for one, DISCONNECT, and ERROR (then close) on a
 * malformed or out-of-order frame.
 */
export class StompBroker {
  readonly sessions = new Set<StompSession>();
  readonly counters: StompBrokerCounters = { frames: 0, heartbeatsReceived: 0, heartbeatsSent: 0, messages: 0, receipts: 0, errors: 0 };
  private nextMessageId = 0;

  constructor(private readonly options: StompBrokerOptions) {}

  /** A new session on `link`; feed it what the transport reads, and tell it when the transport closed. */
  open(link: StompLink): { session: StompSession; data(chunk: Buffer, binary: boolean): void; closed(): void } {
    const parser = new StompParser();
    const session: StompSession = { link, subs: new Map(), connected: false, lastHeard: Date.now(), timers: [] };
    this.sessions.add(session);
    return {
      session,
      data: (chunk, binary) => {
        session.lastHeard = Date.now();
        if (chunk.length > 0 && chunk.every((b) => b === 0x0a || b === 0x0d)) this.counters.heartbeatsReceived++;
        let frames: StompFrame[];
        try {
          frames = parser.push(chunk);
        } catch (err) {
          this.fail(session, "malformed frame", err instanceof StompFrameError ? err.message : String(err));
          return;
        }
        for (const f of frames) if (!this.onFrame(session, f, binary)) return;
      },
      closed: () => {
        if (!this.sessions.delete(session)) return;
        for (const t of session.timers) clearInterval(t);
        this.options.onClose?.(session);
      },
    };
  }

  write(s: StompSession, frame: Buffer, binary = false): void {
    s.link.write(frame, binary);
  }

  /** ERROR, then close: the session is over. */
  fail(s: StompSession, message: string, detail = ""): void {
    this.counters.errors++;
    this.write(s, serializeFrame("ERROR", { message, "content-type": "text/plain" }, Buffer.from(detail)));
    s.link.close(1002, message.slice(0, 120));
  }

  /** MESSAGE to every subscription on `destination`, skipping `except`'s session; returns how many went out. */
  deliver(destination: string, body: Buffer, binary: boolean, headers: Record<string, string>, except?: StompSession): number {
    let n = 0;
    for (const s of this.sessions) {
      if (s === except || !s.connected) continue;
      for (const [id, dest] of s.subs) {
        if (dest !== destination) continue;
        const h: Record<string, string> = { destination, "message-id": String(this.nextMessageId++), subscription: id };
        if (headers["content-type"]) h["content-type"] = headers["content-type"];
        this.write(s, serializeFrame("MESSAGE", h, body), binary);
        n++;
      }
    }
    this.counters.messages += n;
    return n;
  }

  /** Stops every session's heart-beat timers (the server is closing). */
  dispose(): void {
    for (const s of this.sessions) for (const t of s.timers) clearInterval(t);
  }

  private receipt(s: StompSession, frame: StompFrame): void {
    const id = frame.headers.receipt;
    if (id === undefined) return;
    this.counters.receipts++;
    this.write(s, serializeFrame("RECEIPT", { "receipt-id": id }));
  }

  private connect(s: StompSession, h: Record<string, string>): boolean {
    const [cx = 0, cy = 0] = (h["heart-beat"] ?? "0,0").split(",").map(Number);
    if (!Number.isFinite(cx) || !Number.isFinite(cy)) {
      this.fail(s, "invalid heart-beat header", h["heart-beat"]);
      return false;
    }
    const refused = this.options.authenticate?.(h);
    if (refused !== undefined) {
      this.fail(s, refused);
      return false;
    }
    s.connected = true;
    s.login = h.login;
    const beat = this.options.heartbeatMs;
    this.write(s, serializeFrame("CONNECTED", { version: "1.2", "heart-beat": `${beat},${beat}`, server: this.options.server }));
    if (beat === 0) return true;
    // Client wants beats every cy: send every max(cy, ours). Client sends every max(cx, ours):
    // silent for twice that is a dead peer.
    if (cy > 0)
      s.timers.push(
        setInterval(
          () => {
            this.counters.heartbeatsSent++;
            this.write(s, Buffer.from("\n"));
          },
          Math.max(cy, beat),
        ),
      );
    if (cx > 0) {
      const limit = 2 * Math.max(cx, beat);
      s.timers.push(
        setInterval(() => {
          if (Date.now() - s.lastHeard > limit) this.fail(s, "heart-beat timeout", `nothing heard for ${limit} ms`);
        }, limit / 2),
      );
    }
    return true;
  }

  /** One frame; false once the session is over. */
  private onFrame(s: StompSession, frame: StompFrame, binary: boolean): boolean {
    this.counters.frames++;
    const h = frame.headers;
    if (!s.connected) {
      if (frame.command !== "CONNECT" && frame.command !== "STOMP") {
        this.fail(s, "not connected", `${frame.command} before CONNECT`);
        return false;
      }
      return this.connect(s, h);
    }
    switch (frame.command) {
      case "SUBSCRIBE":
        if (!h.destination || h.id === undefined) {
          this.fail(s, "SUBSCRIBE needs destination and id headers");
          return false;
        }
        s.subs.set(h.id, h.destination);
        this.receipt(s, frame);
        this.options.onSubscribed?.(s, h.id, h.destination);
        return true;
      case "UNSUBSCRIBE":
        if (h.id === undefined || !s.subs.delete(h.id)) {
          this.fail(s, "UNSUBSCRIBE of an unknown subscription", `id ${h.id ?? "(missing)"}`);
          return false;
        }
        break;
      case "SEND": {
        if (!h.destination) {
          this.fail(s, "SEND needs a destination header");
          return false;
        }
        const refused = this.options.onSend ? this.options.onSend(s, frame, binary) : void this.deliver(h.destination, frame.body, binary, h);
        if (refused !== undefined) {
          this.fail(s, refused);
          return false;
        }
        break;
      }
      case "DISCONNECT":
        this.receipt(s, frame);
        s.link.close(1000, "");
        return false;
      case "ACK":
      case "NACK":
      case "BEGIN":
      case "COMMIT":
      case "ABORT":
        break;
      default:
        this.fail(s, `unknown command ${frame.command}`);
        return false;
    }
    this.receipt(s, frame);
    return true;
  }
}

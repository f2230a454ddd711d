import { randomUUID } from "node:crypto";
import { Client, type IFrame, type IMessage } from "@stomp/stompjs";
import { stompOptionsSchema } from "@volley/contracts";
import { WebSocket } from "ws";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver, OutMessage } from "./driver";
import type { StompSockjsSocket } from "./stomp-sockjs-socket";
import { classifyWsError } from "./ws-driver";

const SUBPROTOCOLS = ["v12.stomp", "v11.stomp", "v10.stomp"];

function toPayload(msg: IMessage): Buffer | string {
  const b = msg.binaryBody;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** stomp.bodies "text": Volley's message travels as base64 text. */
const fromText = (msg: IMessage): Buffer | string => Buffer.from(msg.body, "base64");

/** An ERROR frame's message header, and its body when short (RabbitMQ says why there: "Access refused for user 'guest'"). */
function errorText(frame: IFrame): string {
  const body = frame.body.trim();
  const message = frame.headers.message ?? "ERROR frame";
  return body && body.length <= 200 && body !== message ? `"${message}": ${body}` : `"${message}"`;
}

/** Error class and detail for a WebSocket that failed or closed before CONNECTED. */
function wsFailure(err: Error | undefined): { errorClass: ErrorClass; detail: string } {
  if (!err) return { errorClass: "closed", detail: "closed before CONNECTED" };
  const status = /Unexpected server response: (\d+)/.exec(err.message);
  if (status) return { errorClass: "handshake", detail: `HTTP ${status[1]}` };
  return classifyWsError(err as NodeJS.ErrnoException);
}

class StompConnection extends ConnectionBase {
  private failure: { errorClass: ErrorClass; reason: string } | undefined;
  /**
   * MESSAGEs that arrived before the engine attached its handler (null once it has): a SockJS
   * frame, or one socket read, can carry the RECEIPT that opens the connection and a MESSAGE
   * after it, handed over in one go before connect()'s caller runs. Kept, not dropped.
   */
  private early: (() => void)[] | null = [];
  private eventCb: (event: string | undefined, data: unknown) => void = (event, data) => void this.early?.push(() => this.eventCb(event, data));

  constructor(
    private readonly client: Client,
    private readonly destination: string,
    private readonly headers: Record<string, string>,
    private readonly lastError: () => Error | undefined,
    /** Volley's own messages as base64 text bodies: stomp.bodies "text", or SockJS (text only). */
    private readonly textBodies: boolean,
    /** SockJS: its frames carry text only, so a flow's bytes go as base64 text too. */
    private readonly textOnly: boolean,
    private readonly dispose: () => void,
  ) {
    super();
    this.deliver = (data) => void this.early?.push(() => this.deliver(data));
    if (textBodies) this.onStompMessage = (msg) => this.deliver(fromText(msg));
  }

  /** Takes over the client's error and close callbacks once connect() has resolved. */
  wire(): void {
    const { client, lastError } = this;
    client.onStompError = (frame: IFrame) => {
      this.failure ??= { errorClass: "protocol", reason: frame.headers.message ?? "ERROR frame" };
    };
    client.onHeartbeatLost = () => {
      this.failure ??= { errorClass: "timeout", reason: "heart-beat lost" };
    };
    client.onWebSocketClose = (e: { code?: number; reason?: string }) => {
      void client.deactivate({ force: true });
      this.dispose();
      const err = lastError();
      const f = this.failure ?? (err ? { errorClass: classifyWsError(err as NodeJS.ErrnoException).errorClass, reason: err.message } : undefined);
      this.ended({ code: e.code, reason: f?.reason ?? e.reason }, f?.errorClass ?? "closed");
    };
  }

  /** The subscription callback: the hot path, one direct call. */
  readonly onStompMessage: (msg: IMessage) => void = (msg) => this.deliver(toPayload(msg));

  /** Flows: a subscription's callback; the event is the destination as the flow named it. */
  listener(destination: string): (msg: IMessage) => void {
    return (msg) => this.eventCb(destination, msg.body);
  }

  override onMessage(cb: (data: Buffer | string) => void): void {
    super.onMessage(cb);
    this.flushEarly();
  }

  override onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    this.eventCb = cb;
    this.flushEarly();
  }

  private flushEarly(): void {
    const early = this.early ?? [];
    this.early = null;
    for (const hand of early) hand();
  }

  /**
   * Flows: SEND to `msg.event` with the plan's headers. A JSON body goes as its JSON text
   * (application/json), text as text/plain, bytes as a binary body; a content-type in the plan's
   * headers wins. Text bodies keep text-only brokers (RabbitMQ Web-STOMP) happy.
   */
  override emit(msg: OutMessage): void {
    if (this.closingByUs || !this.client.connected) return;
    const destination = msg.event ?? this.destination;
    const { body } = msg;
    if (Buffer.isBuffer(body) && this.textOnly) {
      this.client.publish({ destination, headers: { "content-type": "text/plain", ...msg.headers }, body: body.toString("base64") });
      return;
    }
    if (Buffer.isBuffer(body)) {
      this.client.publish({ destination, headers: { "content-type": "application/octet-stream", ...msg.headers }, binaryBody: body });
      return;
    }
    const text = typeof body === "string" && !msg.json ? body : JSON.stringify(body);
    const headers = { "content-type": msg.json ? "application/json" : "text/plain", ...msg.headers };
    this.client.publish({ destination, headers, body: text });
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs || !this.client.connected) return;
    if (typeof payload === "string") this.client.publish({ destination: this.destination, headers: this.headers, body: payload });
    else if (this.textBodies)
      this.client.publish({ destination: this.destination, headers: { ...this.headers, "content-type": "text/plain" }, body: payload.toString("base64") });
    else this.client.publish({ destination: this.destination, headers: this.headers, binaryBody: payload });
  }

  protected shutdown(): void {
    // DISCONNECT, then the socket closes; the engine need not wait for the broker's goodbye.
    // SockJS: the connection's HTTP sockets end once the socket closed, or soon after if the broker never answers.
    const late = setTimeout(this.dispose, 5000).unref();
    void this.client.deactivate().finally(() => {
      clearTimeout(late);
      this.dispose();
    });
    this.ended({ reason: "closed by the client" });
  }
}

/**
 * STOMP 1.2 via @stomp/stompjs, over a `ws` socket for a ws(s):// URL, over a SockJS session
 * (stomp-sockjs-socket.ts, on stomp.transports) for an http(s):// one. Echo: SUBSCRIBE to a private
 * reply destination, SEND to stomp.destination with `reply-to` naming it. Room: SUBSCRIBE to and
 * SEND to stomp.roomDestination with the room filled in. With stomp.receipt the SUBSCRIBE asks for
 * a RECEIPT and the connection counts as open only once it arrives. Flows (opts.listen): SUBSCRIBE
 * to each destination the flow waits on (with receipts likewise), SEND where each message says
 * (emit), and hand every MESSAGE to onEvent with its subscription's destination and body text.
 */
export const stompDriver: Driver = {
  protocol: "stomp",
  connect(opts: ConnectOptions): Promise<Connection> {
    const { protocol, hash } = new URL(opts.url);
    // ws and sockjs-client throw on one inside stompjs's connect, where nothing would catch it.
    if (hash) return Promise.reject(new ConnectError("other", "a STOMP endpoint's URL takes no #fragment: remove it from target.url"));
    if (protocol !== "http:" && protocol !== "https:") return connectStomp(opts, undefined);
    // sockjs-client is loaded only by plans that use it (issue 29: an agent holds no client it does not run).
    return import("./stomp-sockjs-socket").then(({ StompSockjsSocket }) =>
      connectStomp(opts, new StompSockjsSocket(opts.url, (opts.stomp ?? stompOptionsSchema.parse({})).transports, opts)),
    );
  },
};

/** One connection, over `sockjs` when given (an http(s):// endpoint), else over a `ws` socket. */
function connectStomp(opts: ConnectOptions, sockjs: StompSockjsSocket | undefined): Promise<Connection> {
  const options = opts.stomp ?? stompOptionsSchema.parse({});
  const url = new URL(opts.url);
  let lastError: Error | undefined;
  const roomDest = opts.room === undefined ? undefined : options.roomDestination.replaceAll("{room}", opts.room);
  const replyTo = options.replyTo ?? `/queue/volley-${randomUUID()}`;
  const subscribeTo = roomDest ?? replyTo;
  const sendTo = roomDest ?? options.destination;
  const sendHeaders: Record<string, string> = roomDest ? {} : { "reply-to": replyTo };

  const connectHeaders: Record<string, string> = { host: options.host ?? url.hostname };
  if (options.login !== undefined) connectHeaders.login = options.login;
  if (options.passcode !== undefined) connectHeaders.passcode = options.passcode;

  const client = new Client({
    webSocketFactory:
      sockjs?.factory ??
      (() => {
        const ws = new WebSocket(opts.url, SUBPROTOCOLS, {
          headers: opts.headers,
          perMessageDeflate: opts.perMessageDeflate ?? false,
          localAddress: opts.localAddress,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
          followRedirects: false,
        });
        ws.on("error", (err) => (lastError = err));
        return ws;
      }),
    connectHeaders,
    heartbeatIncoming: options.heartbeat.incoming,
    heartbeatOutgoing: options.heartbeat.outgoing,
    // A silent reconnect would hide the disconnect; the engine counts it instead.
    reconnectDelay: 0,
    debug: () => {},
    discardWebsocketOnCommFailure: true,
  });

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (errorClass: ErrorClass, detail: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void client.deactivate({ force: true });
      sockjs?.dispose();
      reject(new ConnectError(errorClass, detail));
    };
    const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
    let connected = false;
    client.onStompError = (frame) =>
      fail(
        "handshake",
        connected
          ? `the broker answered ERROR ${errorText(frame)} before confirming the subscription`
          : `the broker answered CONNECT with ERROR ${errorText(frame)}: check stomp.login, stomp.passcode and stomp.host`,
      );
    client.onWebSocketClose = (e: { code?: number; reason?: string }) => {
      if (settled) return;
      if (sockjs) void sockjs.failure(e).then(({ errorClass, detail }) => fail(errorClass, detail));
      else {
        const { errorClass, detail } = wsFailure(lastError);
        fail(errorClass, detail);
      }
    };
    client.onConnect = () => {
      connected = true;
      const conn = new StompConnection(
        client,
        sendTo,
        sendHeaders,
        () => lastError,
        options.bodies === "text" || sockjs !== undefined,
        sockjs !== undefined,
        () => sockjs?.dispose(),
      );
      const open = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        conn.wire();
        resolve(conn);
      };
      // Flow mode: the destinations the flow waits on, nothing of Volley's own (no reply-to queue).
      const subscriptions: [string, (m: IMessage) => void][] = opts.listen
        ? opts.listen.map((d, i) => [d, conn.listener(opts.listenNames?.[i] ?? d)])
        : [[subscribeTo, conn.onStompMessage]];
      if (!options.receipt || subscriptions.length === 0) {
        for (const [dest, cb] of subscriptions) client.subscribe(dest, cb);
        return open();
      }
      // Open once the broker has confirmed every subscription (its receipts come in order).
      let awaiting = subscriptions.length;
      for (const [dest, cb] of subscriptions) {
        const receiptId = `sub-${randomUUID()}`;
        client.watchForReceipt(receiptId, () => --awaiting === 0 && open());
        client.subscribe(dest, cb, { receipt: receiptId });
      }
    };
    client.activate();
  });
}

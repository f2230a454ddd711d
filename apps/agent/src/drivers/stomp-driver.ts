import { randomUUID } from "node:crypto";
import { Client, type IFrame, type IMessage } from "@stomp/stompjs";
import { stompOptionsSchema } from "@volley/contracts";
import { WebSocket } from "ws";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { classifyWsError } from "./ws-driver";

const SUBPROTOCOLS = ["v12.stomp", "v11.stomp", "v10.stomp"];

function toPayload(msg: IMessage): Buffer | string {
  const b = msg.binaryBody;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
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

  constructor(
    private readonly client: Client,
    private readonly destination: string,
    private readonly headers: Record<string, string>,
    private readonly lastError: () => Error | undefined,
  ) {
    super();
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
      const err = lastError();
      const f = this.failure ?? (err ? { errorClass: classifyWsError(err as NodeJS.ErrnoException).errorClass, reason: err.message } : undefined);
      this.ended({ code: e.code, reason: f?.reason ?? e.reason }, f?.errorClass ?? "closed");
    };
  }

  /** The subscription callback: the hot path, one direct call. */
  readonly onStompMessage = (msg: IMessage): void => this.deliver(toPayload(msg));

  send(payload: Buffer | string): void {
    if (this.closingByUs || !this.client.connected) return;
    if (typeof payload === "string") this.client.publish({ destination: this.destination, headers: this.headers, body: payload });
    else this.client.publish({ destination: this.destination, headers: this.headers, binaryBody: payload });
  }

  protected shutdown(): void {
    // DISCONNECT, then the socket closes; the engine need not wait for the broker's goodbye.
    void this.client.deactivate();
    this.ended({ reason: "closed by the client" });
  }
}

/**
 * STOMP 1.2 over WebSocket via @stomp/stompjs on a `ws` socket. Echo: SUBSCRIBE to a private
 * reply destination, SEND to stomp.destination with `reply-to` naming it. Room: SUBSCRIBE to and
 * SEND to stomp.roomDestination with the room filled in. With stomp.receipt the SUBSCRIBE asks for
 * a RECEIPT and the connection counts as open only once it arrives.
 */
export const stompDriver: Driver = {
  protocol: "stomp",
  connect(opts: ConnectOptions): Promise<Connection> {
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
      webSocketFactory: () => {
        const ws = new WebSocket(opts.url, SUBPROTOCOLS, {
          headers: opts.headers,
          perMessageDeflate: opts.perMessageDeflate ?? false,
          localAddress: opts.localAddress,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
          followRedirects: false,
        });
        ws.on("error", (err) => (lastError = err));
        return ws;
      },
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
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      client.onStompError = (frame) => fail("handshake", frame.headers.message ?? "ERROR frame before the subscription");
      client.onWebSocketClose = () => {
        const { errorClass, detail } = wsFailure(lastError);
        fail(errorClass, detail);
      };
      client.onConnect = () => {
        const conn = new StompConnection(client, sendTo, sendHeaders, () => lastError);
        const open = () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          conn.wire();
          resolve(conn);
        };
        if (!options.receipt) {
          client.subscribe(subscribeTo, conn.onStompMessage);
          return open();
        }
        const receiptId = `sub-${randomUUID()}`;
        client.watchForReceipt(receiptId, open);
        client.subscribe(subscribeTo, conn.onStompMessage, { receipt: receiptId });
      };
      client.activate();
    });
  },
};

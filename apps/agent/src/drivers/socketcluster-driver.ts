/// <reference path="./socketcluster-client.d.ts" />
import { randomUUID } from "node:crypto";
import { socketclusterOptionsSchema, type SocketclusterOptions } from "@volley/contracts";
import { create, type AGClientSocket, type CloseEvent } from "socketcluster-client";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver, OutMessage } from "./driver";
import { classifyWsError } from "./ws-driver";

/** SocketCluster's JSON codec carries binary as `{ base64: true, data }` and hands it back as that object. */
function toPayload(data: unknown): Buffer | string {
  if (typeof data === "string") return data;
  const b = data as { base64?: unknown; data?: unknown } | null;
  if (b && b.base64 === true && typeof b.data === "string") return Buffer.from(b.data, "base64");
  // Not one of our messages (a `{ count }` pong, say): the engine counts it as a protocol error.
  return JSON.stringify(data) ?? "";
}

const TIMEOUT_CODES = new Set([4000, 4001, 4005, 4007]);
const PROTOCOL_CODES = new Set([1002, 1003, 1007, 1009, 1010, 4009]);

/** Close codes as SocketCluster uses them (sc-errors' socketProtocolErrorStatuses). */
function closeClass(code: number): ErrorClass {
  if (TIMEOUT_CODES.has(code)) return "timeout";
  if (PROTOCOL_CODES.has(code)) return "protocol";
  return "closed";
}

/** Why an attempt ended before `connect`: the `ws` error when there was one, else the close code. */
function connectFailure(e: CloseEvent, wsError: Error | undefined): { errorClass: ErrorClass; detail: string } {
  if (wsError) {
    const status = /Unexpected server response: (\d+)/.exec(wsError.message);
    if (status) return { errorClass: "handshake", detail: `HTTP ${status[1]}` };
    return classifyWsError(wsError as NodeJS.ErrnoException);
  }
  const detail = e.reason ? `${e.code} ${e.reason}` : `close ${e.code}`;
  if (e.code === 4003 || e.code === 4008) return { errorClass: "handshake", detail };
  if (TIMEOUT_CODES.has(e.code)) return { errorClass: "timeout", detail };
  return { errorClass: closeClass(e.code), detail };
}

/** What a connection sends on and listens to, from the mode and the room. */
type Route = { kind: "invoke" | "transmit"; event: string } | { kind: "publish"; channel: string };

function routeFor(options: SocketclusterOptions, room: string | undefined): Route {
  // A connection in a room publishes to the room's channel whatever the mode: messages go to the room.
  if (room !== undefined) return { kind: "publish", channel: room };
  if (options.mode === "publish") return { kind: "publish", channel: options.channel ?? `volley-${randomUUID()}` };
  return { kind: options.mode, event: options.event };
}

/** Flows: the event a setup step sends to join a channel (SocketCluster's own procedure name). */
export const SC_SUBSCRIBE = "#subscribe";
/** Flows: the event channel messages are sent and heard on, as `{ channel, data }` (SocketCluster's wire form). */
export const SC_PUBLISH = "#publish";

class SocketclusterConnection extends ConnectionBase {
  private readonly reply = (data: unknown) => this.deliver(toPayload(data));
  private eventCb: (event: string | undefined, data: unknown) => void = () => {};
  private readonly invokeFailed = (err: Error) => {
    // Timeouts and aborts by a disconnect are counted by the engine (lost, closed); a procedure
    // that answered with an error is the server refusing this message.
    if (err.name === "TimeoutError" || err.name === "BadConnectionError") return;
    this.messageError("protocol", err.message);
  };

  constructor(
    private readonly client: AGClientSocket,
    /** Volley's own conventions; undefined in flow mode. */
    private readonly route: Route | undefined,
    listen: string[] | undefined,
  ) {
    super();
    if (route?.kind === "transmit") void this.pump(client.receiver(route.event), this.reply);
    if (route?.kind === "publish") void this.pump(client.subscribe(route.channel), this.reply);
    // Flows: SocketCluster has no catch-all receiver, so a flow hears the events it waits for;
    // channel messages come through the subscriptions its #subscribe steps make.
    for (const event of listen ?? []) {
      if (event !== SC_PUBLISH) void this.pump(client.receiver(event), (data) => this.eventCb(event, data));
    }
    if (listen) this.hearTheRest(new Set(listen));
    void client
      .listener("disconnect")
      .once()
      .then((e) => {
        client.closeAllReceivers();
        client.closeAllChannels();
        client.closeAllListeners();
        this.ended({ code: e.code, reason: e.reason }, closeClass(e.code));
      });
  }

  /**
   * Events the flow does not wait for still reach it, to be counted per event and sampled (a reply
   * on an event the plan did not expect must show up as unmatched, not as silence). The client has
   * no public catch-all; its per-message inbound hook is wrapped when it is there (v20).
   */
  private hearTheRest(listened: Set<string>): void {
    const inbound = this.client._onInboundTransmit;
    if (typeof inbound !== "function") return;
    this.client._onInboundTransmit = (event, data) => {
      inbound.call(this.client, event, data);
      if (!listened.has(event) && !event.startsWith("#")) this.eventCb(event, data);
    };
  }

  private async pump(stream: AsyncIterable<unknown>, to: (data: unknown) => void): Promise<void> {
    for await (const data of stream) to(data);
  }

  send(payload: Buffer | string): void {
    // The client would reconnect to send on a closed socket; the engine counts the close instead.
    if (this.client.state !== "open" || !this.route) return;
    const r = this.route;
    if (r.kind === "publish") void this.client.transmitPublish(r.channel, payload);
    // The response answers this very invoke, whatever it carries: deliver the message it answers.
    else if (r.kind === "invoke") this.client.invoke(r.event, payload).then(() => this.deliver(payload), this.invokeFailed);
    else void this.client.transmit(r.event, payload);
  }

  /**
   * Flows: transmit `event` with the body, or invoke it when an ack is awaited (the RPC's response
   * is the ack's data). `#subscribe` with `{ channel }` subscribes through the client (which then
   * hands that channel's messages to onEvent as `#publish` `{ channel, data }`), acknowledged once
   * the server confirms; `#publish` with `{ channel, data }` is the client's own publish.
   */
  override emit(msg: OutMessage, ack?: (data: unknown) => void): void {
    if (this.client.state !== "open") return;
    const event = msg.event ?? "message";
    if (event === SC_SUBSCRIBE) return this.subscribe(msg.body, ack);
    if (!ack) return void this.client.transmit(event, msg.body).catch(() => undefined);
    this.client.invoke(event, msg.body).then(ack, this.invokeFailed);
  }

  override onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    this.eventCb = cb;
  }

  private subscribe(body: unknown, ack: ((data: unknown) => void) | undefined): void {
    const name = (body as { channel?: unknown } | null)?.channel;
    if (typeof name !== "string") return this.messageError("protocol", `${SC_SUBSCRIBE} needs json: { channel: "<name>" }`);
    const channel = this.client.subscribe(name);
    void this.pump(channel, (data) => this.eventCb(SC_PUBLISH, { channel: name, data }));
    void channel
      .listener("subscribe")
      .once()
      .then((e) => e && ack?.({ channel: name }));
    void channel
      .listener("subscribeFail")
      .once()
      // Refused: no ack, so the setup step fails at its timeout; counted here as the server's refusal.
      .then((e) => e && this.messageError("protocol", `subscribe to ${name} refused: ${e.error.message}`));
  }

  protected shutdown(): void {
    this.client.disconnect(1000, "closed by the client");
  }
}

/**
 * SocketCluster (protocol v2) via socketcluster-client. invoke: the procedure's response is the
 * reply; transmit: the server transmits the reply back on the same event; publish: the connection
 * subscribes to a channel and publishes to it. A room is a channel: connect() resolves once the
 * subscription is confirmed, and every message is published to it. target.url names the endpoint;
 * a URL without a path uses socketcluster.path. Flows: see emit (events, #subscribe, #publish).
 */
export const socketclusterDriver: Driver = {
  protocol: "socketcluster",
  connect(opts: ConnectOptions): Promise<Connection> {
    const options = opts.socketcluster ?? socketclusterOptionsSchema.parse({});
    const url = new URL(opts.url);
    const secure = url.protocol === "wss:";
    const client = create({
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port ? Number(url.port) : secure ? 443 : 80,
      path: url.pathname === "/" ? options.path : url.pathname,
      secure,
      query: url.search.slice(1),
      // A silent reconnect would hide the disconnect; the engine counts it instead.
      autoReconnect: false,
      // Timed below, around the subscription too; the client's own timer is only a backstop.
      connectTimeout: opts.connectTimeoutMs + 1000,
      wsOptions: {
        headers: opts.headers,
        perMessageDeflate: opts.perMessageDeflate ?? false,
        localAddress: opts.localAddress,
        ...(opts.lookup ? { lookup: opts.lookup } : {}),
        followRedirects: false,
      },
    });
    let wsError: Error | undefined;
    client.transport?.socket.on("error", (err: Error) => (wsError = err));
    // Flow mode (opts.listen set): the plan's events and channels, none of Volley's conventions.
    const route = opts.listen ? undefined : routeFor(options, opts.room);

    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.closeAllListeners();
        client.closeAllChannels();
        client.disconnect(1000, "connect failed");
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      void client
        .listener("connectAbort")
        .once()
        .then((e) => {
          const { errorClass, detail } = connectFailure(e, wsError);
          fail(errorClass, detail);
        });
      void client
        .listener("connect")
        .once()
        .then(async () => {
          if (settled) return;
          // Lost between the handshake and the subscription: a close, not a connect failure class of its own.
          const lost = client
            .listener("disconnect")
            .once()
            .then((e) => ({ lost: e }));
          if (route?.kind === "publish") {
            const channel = client.subscribe(route.channel);
            const outcome = await Promise.race([
              channel
                .listener("subscribe")
                .once()
                .then(() => ({ ok: true as const })),
              channel
                .listener("subscribeFail")
                .once()
                .then(({ error }) => ({ error })),
              lost,
            ]);
            if ("error" in outcome) return fail("handshake", `subscribe to ${route.channel} refused: ${outcome.error.message}`);
            if ("lost" in outcome) return fail("closed", `closed before the subscription (${outcome.lost.code})`);
          }
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          client.closeAllListeners();
          resolve(new SocketclusterConnection(client, route, opts.listen));
        });
    });
  },
};

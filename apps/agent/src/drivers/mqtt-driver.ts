import { COUNTERS, compileText, mqttOptionsSchema, type MqttOptions, type TemplateContext } from "@volley/contracts";
import mqtt, { type IClientPublishOptions, type IPublishPacket, type MqttClient, ReasonCodes } from "mqtt";
import { WebSocket } from "ws";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver, OutMessage } from "./driver";
import { classifyWsError } from "./ws-driver";

/** Error class and detail for a WebSocket that failed or closed before CONNACK. */
function wsFailure(err: Error | undefined): { errorClass: ErrorClass; detail: string } {
  // Some brokers (RabbitMQ for bad credentials) close without a CONNACK: say where to look.
  if (!err) return { errorClass: "closed", detail: "closed before CONNACK, without a reason: check mqtt.username and mqtt.password, and the broker's log" };
  const status = /Unexpected server response: (\d+)/.exec(err.message);
  if (status) return { errorClass: "handshake", detail: `HTTP ${status[1]}` };
  return classifyWsError(err as NodeJS.ErrnoException);
}

/** mqtt.js reports a refused CONNACK, SUBACK or PUBACK as an Error with the reason code. */
const reasonCode = (err: Error): number | undefined => {
  const code = (err as Error & { code?: unknown }).code;
  return typeof code === "number" ? code : undefined;
};

/** Templates render once per connection: no message variables, a fresh random per call. */
function render(template: string, room: string | undefined): string {
  const ctx: TemplateContext = { connIndex: 0, connRoom: room, msgId: "", msgSeq: 0, data: undefined, vars: {} };
  return compileText(template)(ctx);
}

/** Whether `topic` is one that `filter` subscribes to: + stands for one level, # for every level below. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split("/");
  const t = topic.split("/");
  // Wildcards at the first level never match the broker's own $ topics (MQTT 4.7.2).
  if (t[0]?.startsWith("$") && (f[0] === "+" || f[0] === "#")) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return true;
    if (i >= t.length || (f[i] !== "+" && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** Flows: a subscription's filter as the connection subscribed to it, and the name its messages are reported under. */
interface Listen {
  filter: string;
  name: string;
}

class MqttConnection extends ConnectionBase {
  private readonly publishOptions: IClientPublishOptions;
  /** QoS 1 and 2: each acknowledgement counted; a refused one fails that message (counted by class at once). */
  private readonly acked: ((err?: Error) => void) | undefined;
  /** Flows: the same, for a message whose own QoS is 1 or 2. */
  private readonly onAck: (err?: Error) => void;
  /** Until the engine asks for counts: a retained copy can arrive with the SUBACK, before connect() has resolved. */
  private early: string[] = [];
  private count: (counter: string) => void = (c) => this.early.push(c);
  /** Flows: messages that came with the SUBACK, before the engine's onEvent. */
  private earlyEvents: [string, Buffer][] | null = [];
  private eventCb: (event: string | undefined, data: unknown) => void = (event, data) => this.earlyEvents?.push([event!, data as Buffer]);

  constructor(
    private readonly client: MqttClient,
    private readonly topic: string,
    clientId: string,
    options: MqttOptions,
    lastError: () => Error | undefined,
    /** Flows: the subscriptions, in the plan's order (a message goes under the first that matches its topic). */
    listens: Listen[] | undefined,
    /** Messages the broker sent between SUBSCRIBE and its SUBACK (MQTT allows it): handled as if they came now. */
    early: [string, Buffer, IPublishPacket][],
  ) {
    super();
    this.publishOptions = { qos: options.qos, retain: options.retain };
    const acked = (err?: Error) => {
      if (!err) this.count(COUNTERS.mqttAcked);
      else if (!this.closingByUs) this.messageError("protocol", err.message);
    };
    this.onAck = acked;
    if (options.qos > 0) this.acked = acked;
    // Retained copies replayed on SUBSCRIBE were not sent live to this connection: counted apart, never a reply or a delivery.
    const onMessage = (topic: string, payload: Buffer, packet: IPublishPacket) => {
      if (packet.retain) this.count(COUNTERS.mqttRetained);
      else if (listens) this.eventCb(listens.find((l) => topicMatches(l.filter, topic))?.name ?? topic, payload);
      else if (this.earlyDeliveries) this.earlyDeliveries.push(payload);
      else this.deliver(payload);
    };
    client.on("message", onMessage);
    for (const [topic, payload, packet] of early) onMessage(topic, payload, packet);
    client.on("close", () => {
      const err = lastError();
      const f = err ? { errorClass: classifyWsError(err as NodeJS.ErrnoException).errorClass, reason: err.message } : undefined;
      this.ended({ reason: f?.reason ?? "closed by the broker" }, f?.errorClass ?? "closed");
    });
    // A DISCONNECT from an MQTT 5 broker carries its reason code; the close that follows reports it.
    client.on("disconnect", (packet) => {
      const rc = packet.reasonCode;
      if (!rc) return;
      const why = packet.properties?.reasonString ?? (ReasonCodes as Record<number, string | undefined>)[rc] ?? "no reason given";
      // 142: a later connection with the same client id took the session over (a fixed mqtt.clientId shared by connections).
      const fix = rc === 142 ? `: another connection used client id ${clientId}; make mqtt.clientId unique per connection, like volley-{{ random.hex }}` : "";
      this.ended({ code: rc, reason: `DISCONNECT: ${why} (reason code ${rc})${fix}` }, "protocol");
    });
  }

  /** Deliveries that came before the engine listened (with or right after the SUBACK), handed over when it does. */
  private earlyDeliveries: Buffer[] | null = [];

  override onMessage(cb: (data: Buffer | string) => void): void {
    super.onMessage(cb);
    const early = this.earlyDeliveries ?? [];
    this.earlyDeliveries = null;
    for (const payload of early) cb(payload);
  }

  onCount(cb: (counter: string) => void): void {
    this.count = cb;
    for (const c of this.early.splice(0)) cb(c);
  }

  override onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    this.eventCb = cb;
    const early = this.earlyEvents ?? [];
    this.earlyEvents = null;
    for (const [event, data] of early) cb(event, data);
  }

  /**
   * Flows: PUBLISH to `msg.event` (else the connection's topic) at the message's QoS (else
   * target.mqtt.qos): a JSON body as its JSON text, text as UTF-8, bytes as they are.
   */
  override emit(msg: OutMessage): void {
    if (this.closingByUs || !this.client.connected) return;
    const { body } = msg;
    const payload = Buffer.isBuffer(body) || (typeof body === "string" && !msg.json) ? body : JSON.stringify(body);
    const qos = msg.qos ?? this.publishOptions.qos!;
    const topic = msg.event ?? this.topic;
    // A topic rendered from data or a capture: a wildcard or an empty one would make the broker drop the connection.
    if (topic === "" || /[+#]/.test(topic))
      return this.messageError("protocol", `not published: the topic "${topic}" is empty or has a wildcard (+ or #); check the values its template reads`);
    this.client.publish(topic, payload, { qos, retain: this.publishOptions.retain }, qos > 0 ? this.onAck : undefined);
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs || !this.client.connected) return;
    this.client.publish(this.topic, payload, this.publishOptions, this.acked);
  }

  protected shutdown(): void {
    // DISCONNECT, then the socket closes; the engine need not wait for the broker's goodbye.
    this.client.end(false);
    this.ended({ reason: "closed by the client" });
  }
}

/**
 * MQTT 3.1.1 or 5 over WebSocket via mqtt.js on a `ws` socket. Echo: SUBSCRIBE to the connection's
 * own topic (mqtt.topic, or volley/<client id>) and PUBLISH there, so the broker's delivery back is
 * the round trip. Room: SUBSCRIBE to and PUBLISH on mqtt.roomTopic with {{ conn.room }} filled in;
 * the broker hands the sender its own copy too (broadcast's echo). The connection counts as open
 * once the SUBACK grants the subscription. No reconnects: a lost connection is counted, not hidden.
 * Flows (opts.listen): SUBSCRIBE to the topic filters the flow's replies and waits name instead,
 * PUBLISH each message to its own topic at its own QoS (emit), and hand every live message to
 * onEvent under the first filter that matches its topic.
 */
export const mqttDriver: Driver = {
  protocol: "mqtt",
  connect(opts: ConnectOptions): Promise<Connection> {
    const options = opts.mqtt ?? mqttOptionsSchema.parse({});
    const clientId = render(options.clientId, opts.room);
    const topic =
      opts.room === undefined ? (options.topic === undefined ? `volley/${clientId}` : render(options.topic, undefined)) : render(options.roomTopic, opts.room);
    // Flows: the topic filters replies and waits arrive on (rendered per connection), reported as the plan spells them.
    const listens = opts.listen?.map((filter, i) => ({ filter, name: opts.listenNames?.[i] ?? filter }));
    let lastError: Error | undefined;

    const client = mqtt.connect(opts.url, {
      protocolVersion: options.version === "5" ? 5 : 4,
      clientId,
      username: options.username,
      password: options.password,
      clean: options.clean,
      reconnectPeriod: 0,
      connectTimeout: opts.connectTimeoutMs,
      // A message handed to a closed connection is dropped, not replayed after a reconnect that never comes.
      queueQoSZero: false,
      createWebsocket: (url: string, protocols: string[]) => {
        const ws = new WebSocket(url, protocols, {
          headers: opts.headers,
          perMessageDeflate: opts.perMessageDeflate ?? false,
          localAddress: opts.localAddress,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
          followRedirects: false,
        });
        ws.on("error", (err) => (lastError = err));
        return ws;
      },
    });

    return new Promise((resolve, reject) => {
      let settled = false;
      // Only our own listeners come off: mqtt.js keeps its own on "close" and "connect" (keepalive, connected flag).
      const onError = (err: Error) => {
        // A refused CONNACK names its reason ("Connection refused: Not authorized", code 5 or 135).
        const rc = reasonCode(err);
        if (rc !== undefined) return fail("handshake", `${err.message} (CONNACK reason code ${rc})`);
        lastError ??= err;
      };
      const onClose = () => {
        const { errorClass, detail } = wsFailure(lastError);
        fail(errorClass, detail);
      };
      const onConnect = () => {
        // A flow listening on nothing (fire and forget) is open at CONNACK.
        if (listens?.length === 0) return open();
        const filters = listens ? [...new Set(listens.map((l) => l.filter))] : [topic];
        client.on("message", keepEarly);
        client.subscribe(filters, { qos: options.qos }, (err, granted) => {
          if (settled) return;
          const refused = granted?.find((g) => g.qos >= 0x80);
          if (err || refused)
            return fail(
              "handshake",
              `SUBSCRIBE to ${refused?.topic ?? filters.join(", ")} refused: ${err?.message ?? `SUBACK reason code ${refused!.qos}`} (check the broker's ACL for this topic)`,
            );
          open();
        });
      };
      // The broker may deliver on a subscription before its SUBACK: kept, not lost to a listener not yet there.
      const early: [string, Buffer, IPublishPacket][] = [];
      const keepEarly = (t: string, p: Buffer, packet: IPublishPacket) => early.push([t, p, packet]);
      const open = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.off("close", onClose);
        client.off("error", onError);
        client.off("message", keepEarly);
        client.on("error", (e) => (lastError ??= e));
        resolve(new MqttConnection(client, topic, clientId, options, () => lastError, listens, early));
      };
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.off("close", onClose);
        client.off("error", onError);
        client.off("connect", onConnect);
        client.on("error", () => {}); // late socket errors of an abandoned attempt
        client.end(true);
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      client.on("error", onError);
      client.on("close", onClose);
      client.once("connect", onConnect);
    });
  },
};

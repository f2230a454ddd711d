import type { Flow } from "./flow";

type Path = (string | number)[];

/** Flows on SocketCluster: the two of its own `#` events a flow may name (its wire protocol's names). */
export const SOCKETCLUSTER_SUBSCRIBE = "#subscribe";
export const SOCKETCLUSTER_PUBLISH = "#publish";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * SocketCluster keeps `#` events for its own protocol. A flow uses channels by their wire names:
 * a setup `send: { event: "#subscribe", json: { channel }, ack: true }` subscribes (through the
 * client, acknowledged once the server confirms), a message `{ event: "#publish", json: { channel,
 * data } }` publishes, and channel messages are heard as `#publish` `{ channel, data }`. Any other
 * `#` name would be swallowed by the client or the server: refused, naming the fix.
 */
export function checkSocketclusterFlow(flow: Flow, issue: (path: Path, message: string) => void): void {
  const outgoing = (m: { event?: string; json?: unknown; text?: string; ack?: boolean }, at: Path, inSetup: boolean) => {
    const event = m.event;
    if (event === undefined || !event.startsWith("#")) return;
    if (event === SOCKETCLUSTER_SUBSCRIBE) {
      if (!inSetup)
        return issue([...at, "event"], 'subscribe once per connection in a setup step: send: { event: "#subscribe", json: { channel: "…" }, ack: true }');
      if (!isObject(m.json) || typeof m.json.channel !== "string")
        issue([...at, "json"], '#subscribe names its channel: json: { channel: "room-{{ conn.index }}" }');
      if (!m.ack) issue([...at, "ack"], "set ack: true: the connection is in the channel only once the server confirms the subscription");
      return;
    }
    if (event === SOCKETCLUSTER_PUBLISH) {
      if (!isObject(m.json) || typeof m.json.channel !== "string" || !("data" in m.json)) {
        issue([...at, "json"], '#publish carries the channel and the message: json: { channel: "lobby", data: { … } }');
      }
      return;
    }
    issue(
      [...at, "event"],
      `"${event}" is reserved by SocketCluster (# names are its protocol's): channels are #subscribe and #publish; other events have no #`,
    );
  };
  const incoming = (event: string | undefined, at: Path) => {
    if (event === undefined || !event.startsWith("#") || event === SOCKETCLUSTER_PUBLISH) return;
    issue(at, `"${event}" never reaches a flow: channel messages arrive as "#publish" { channel, data }; other events have no #`);
  };
  flow.setup.forEach((step, i) => {
    if ("send" in step) outgoing(step.send, ["setup", i, "send"], true);
    if ("waitFor" in step) incoming(step.waitFor.event, ["setup", i, "waitFor", "event"]);
  });
  flow.messages?.forEach((m, i) => {
    outgoing(m, ["messages", i], false);
    if (m.reply !== false) incoming(m.reply.event, ["messages", i, "reply", "event"]);
  });
}

import type { Flow } from "./flow";

type Path = (string | number)[];

/**
 * Flows on STOMP: a connection receives only on the destinations it SUBSCRIBEs to, and it
 * subscribes to the destinations its replies and waitFor steps name. A reply or wait without one
 * would never arrive: refused, naming the fix. Messages SEND to their `event` destination.
 */
export function checkStompFlow(flow: Flow, issue: (path: Path, message: string) => void): void {
  const fix = 'name the destination it arrives on, like event: "/topic/chat" (the connection subscribes to it)';
  flow.setup.forEach((step, i) => {
    if ("waitFor" in step && step.waitFor.event === undefined) issue(["setup", i, "waitFor", "event"], `on STOMP a message arrives on a subscription: ${fix}`);
    if ("send" in step && step.send.event === undefined)
      issue(["setup", i, "send", "event"], 'on STOMP a SEND needs its destination: add event: "/queue/…" or "/topic/…"');
  });
  flow.messages?.forEach((m, i) => {
    if (m.event === undefined) issue(["messages", i, "event"], 'on STOMP a SEND needs its destination: add event: "/queue/…" or "/topic/…"');
    if (m.reply !== false && !m.reply.ack && m.reply.event === undefined)
      issue(["messages", i, "reply", "event"], `on STOMP a reply arrives on a subscription: ${fix}`);
  });
}

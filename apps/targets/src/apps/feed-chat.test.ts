import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { TestApp } from "./app-http";
import { startFeedChat, type FeedChatMessage, type FeedChatStats } from "./feed-chat";

const apps: TestApp<FeedChatStats>[] = [];
const aborts: AbortController[] = [];
afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  for (const a of apps.splice(0)) await a.close();
});

/** Reads an event stream until `count` events came, as { event, id, data }. */
async function events(url: string, count: number, onOpen: () => Promise<void>) {
  const abort = new AbortController();
  aborts.push(abort);
  const res = await fetch(url, { signal: abort.signal });
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  await onOpen();
  const out: { event?: string; id?: string; data?: string }[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (frame.startsWith(":")) continue;
      out.push(Object.fromEntries(frame.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)])));
    }
    if (out.length >= count) break;
  }
  return out;
}

describe("feed-chat", () => {
  it("delivers each post to the room's event streams and sockets with the chat's own id, answers history on a socket, counts all of it", async () => {
    const app = await startFeedChat();
    apps.push(app);
    const ws = new WebSocket(`${app.url}?room=r1`);
    const frames: unknown[] = [];
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((resolve) => ws.once("open", resolve));
    const post = (room: string, body: unknown) =>
      fetch(`${app.httpUrl}/api/rooms/${room}/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    let posted: { id: string; delivered: number } | undefined;
    const got = await events(`${app.httpUrl}/api/rooms/r1/events`, 1, async () => {
      // Another room's post reaches nobody here.
      expect((await post("r2", { text: "elsewhere" })).status).toBe(201);
      const res = await post("r1", { text: "hi", clientMsgId: "c1" });
      expect(res.status).toBe(201);
      posted = (await res.json()) as typeof posted;
    });
    expect(posted!.delivered).toBe(2);
    expect(got[0]!.event).toBe("message");
    expect(got[0]!.id).toBe(posted!.id);
    const message = JSON.parse(got[0]!.data!) as FeedChatMessage;
    expect(message).toMatchObject({ id: posted!.id, room: "r1", text: "hi", clientMsgId: "c1" });
    ws.send(JSON.stringify({ type: "history", requestId: "q1", limit: 5 }));
    await expect.poll(() => frames.length).toBe(2);
    expect(frames[0]).toEqual({ type: "message", message });
    expect(frames[1]).toEqual({ type: "history", requestId: "q1", messages: [message] });
    expect((await post("r1", {})).status).toBe(400);
    expect((await fetch(`${app.httpUrl}/api/nowhere`)).status).toBe(404);
    ws.close();
    expect(app.stats()).toMatchObject({ posts: 2, streams: 1, sockets: 1, streamDeliveries: 1, socketDeliveries: 1, historyRequests: 1, errors: 0 });
  });

  it("endStreamsAfter ends a stream once it delivered that many messages, counted", async () => {
    const app = await startFeedChat({ endStreamsAfter: 1 });
    apps.push(app);
    const got = await events(`${app.httpUrl}/api/rooms/r1/events`, 1, async () => {
      await fetch(`${app.httpUrl}/api/rooms/r1/messages`, { method: "POST", body: JSON.stringify({ text: "only" }) });
    });
    expect(got).toHaveLength(1);
    await expect.poll(() => app.stats().activeStreams).toBe(0);
    expect(app.stats()).toMatchObject({ streams: 1, streamsEnded: 1, streamDeliveries: 1 });
  });
});

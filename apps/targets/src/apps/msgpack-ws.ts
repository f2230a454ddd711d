import { pack, unpack } from "msgpackr";
import type { RawData } from "ws";
import type { TestApp, TestAppOptions } from "./app-http";
import { startWsApp } from "./ws-app";

export const MSGPACK_WS_PATH = "/msgpack";

export interface MsgpackWsStats {
  /** Binary frames that decoded as a MessagePack request `{ id, op, … }`. */
  requests: number;
  /** Replies sent (one per request; an unknown op is answered with `error`). */
  replies: number;
  /** Binary frames that were not MessagePack, or not a request. */
  malformed: number;
  /** Text frames (this server speaks binary only; they are counted and left unanswered). */
  textFrames: number;
}

const ops: Record<string, (req: Record<string, unknown>) => unknown> = {
  echo: (req) => req.data ?? null,
  add: (req) => (typeof req.a === "number" && typeof req.b === "number" ? req.a + req.b : undefined),
};

/**
 * A server speaking MessagePack over binary WebSocket frames at `/msgpack`, as game and trading
 * backends do: each request `{ id, op, … }` (`op` echo → `data`, add → `a + b`) is answered with
 * `{ id, op, result, n }` where `n` counts the server's replies (its own field, not a copy of the
 * request). Unknown ops get `{ id, error }`; frames that are not a request, and text frames, are
 * counted and left unanswered. Counters at GET /stats.
 */
export function startMsgpackWs(options: TestAppOptions = {}): Promise<TestApp<MsgpackWsStats>> {
  const counters: MsgpackWsStats = { requests: 0, replies: 0, malformed: 0, textFrames: 0 };
  const stats = () => ({ ...counters });
  return startWsApp(options, { path: MSGPACK_WS_PATH, stats }, (ws) => {
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (!isBinary) return void counters.textFrames++;
      let req: unknown;
      try {
        req = unpack(data as Buffer);
      } catch {
        return void counters.malformed++;
      }
      const r = req as Record<string, unknown>;
      if (r === null || typeof r !== "object" || (typeof r.id !== "string" && typeof r.id !== "number") || typeof r.op !== "string")
        return void counters.malformed++;
      counters.requests++;
      const op = Object.hasOwn(ops, r.op) ? ops[r.op] : undefined;
      const result = op?.(r);
      const n = ++counters.replies;
      ws.send(
        pack(
          result === undefined
            ? { id: r.id, error: `cannot ${r.op}: this server has ${Object.keys(ops).join(", ")} (add takes numbers a and b)`, n }
            : { id: r.id, op: r.op, result, n },
        ),
      );
    });
  });
}

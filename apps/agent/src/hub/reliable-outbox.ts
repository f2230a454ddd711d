import type { Logger } from "pino";
import type { Socket } from "socket.io-client";
import { ackSchema } from "@volley/contracts";

interface Item {
  event: string;
  payload: unknown;
  /** Explicit rejections ({ok:false}) so far; timeouts and disconnects do not count. */
  rejections: number;
  onAcked?: () => void;
  onDropped?: (error: string) => void;
}

export interface OutboxOptions {
  ackTimeoutMs?: number;
  /** After this many {ok:false} answers an item is dropped (logged), so a hub that refuses it for good cannot wedge the agent. */
  maxRejections?: number;
  retryDelayMs?: (attempt: number) => number;
}

/**
 * The spool between the engine and the hub. Items (frames, then shard.end) go out one at a time,
 * in order, each until the hub acks {ok:true}; what was in flight when the connection dropped is
 * sent again after the reconnect, so the hub sees every frame, in order, at least once (it stores
 * (shardId, seq) once). One in flight at a time keeps the order trivially and costs nothing at one
 * frame per second.
 */
export class ReliableOutbox {
  private readonly queue: Item[] = [];
  private pumping = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private wake: (() => void) | undefined;
  private readonly ackTimeoutMs: number;
  private readonly maxRejections: number;
  private readonly retryDelayMs: (attempt: number) => number;

  constructor(
    private readonly socket: Socket,
    private readonly log: Logger,
    opts: OutboxOptions = {},
  ) {
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 5000;
    this.maxRejections = opts.maxRejections ?? 20;
    this.retryDelayMs = opts.retryDelayMs ?? ((n) => Math.min(30_000, 500 * 2 ** Math.min(n, 6)));
    socket.on("connect", () => this.wake?.());
  }

  get size(): number {
    return this.queue.length;
  }

  push(event: string, payload: unknown, callbacks: Pick<Item, "onAcked" | "onDropped"> = {}): void {
    this.queue.push({ event, payload, rejections: 0, ...callbacks });
    void this.pump();
  }

  /** Resolves once everything queued so far has been acked (or dropped), or after timeoutMs. */
  whenIdle(timeoutMs = Infinity): Promise<boolean> {
    if (this.queue.length === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => resolve(false), timeoutMs) : undefined;
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Stops sending; unsent items stay unsent (the process is going away). */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    let failures = 0;
    while (this.queue.length > 0 && !this.closed) {
      if (!this.socket.connected) {
        await this.sleep(Infinity); // until the next connect
        continue;
      }
      const item = this.queue[0]!;
      let answer: unknown;
      try {
        answer = await this.socket.timeout(this.ackTimeoutMs).emitWithAck(item.event, item.payload);
      } catch (err) {
        // Timed out, or the connection dropped under it: send it again (the hub dedupes).
        failures++;
        this.log.debug({ event: item.event, err: (err as Error).message }, "no ack, will resend");
        if (this.socket.connected) await this.sleep(this.retryDelayMs(failures));
        continue;
      }
      const ack = ackSchema.safeParse(answer);
      if (ack.success && ack.data.ok) {
        this.queue.shift();
        failures = 0;
        item.onAcked?.();
        continue;
      }
      const error = ack.success && !ack.data.ok ? ack.data.error : `malformed ack ${JSON.stringify(answer)}`;
      const permanent = ack.success && !ack.data.ok && ack.data.permanent === true;
      item.rejections++;
      if (permanent || item.rejections >= this.maxRejections) {
        this.queue.shift();
        this.log.error(
          { event: item.event, error },
          permanent ? `hub refused ${item.event} for good; dropping it` : `hub refused ${item.event} ${item.rejections} times; dropping it`,
        );
        item.onDropped?.(error);
        continue;
      }
      this.log.warn({ event: item.event, error }, `hub refused ${item.event}; retrying`);
      await this.sleep(this.retryDelayMs(item.rejections));
    }
    this.pumping = false;
    if (this.queue.length === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Waits ms, or until woken by a connect or close. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      this.wake = done;
    });
  }
}

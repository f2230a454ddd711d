import type { CloseInfo, Connection, Driver } from "../drivers/driver";
import { decodeMessage } from "./message-codec";

/**
 * A real driver seen from the outside, for scenario tests: it counts what each connection sent
 * and handed to the engine, so a test can check the engine's delivery accounting against its own
 * independent count. `barrier` holds every connect until that many are open, so the room is full
 * before the first message (otherwise the first senders rightly expect fewer deliveries).
 */
export class WatchedConnection implements Connection {
  /** The engine's id for this connection, learnt from its first message. */
  ownId = -1;
  sent = 0;
  /** Intended send times of its messages, µs. */
  readonly intended: number[] = [];
  /** Messages from other members handed to the engine (deliveries), and own copies (round trips). */
  forwardedDeliveries = 0;
  forwardedEchoes = 0;
  /** Senders of the deliveries handed over. */
  readonly senders = new Set<number>();
  /** Set: nothing more reaches the engine (a receiver that hangs before it goes away). */
  swallowing = false;
  /** The engine has heard of the close. */
  closed = false;

  constructor(
    private readonly inner: Connection,
    private readonly kit: WatchedDriver,
  ) {}

  send(payload: Buffer | string): void {
    const m = typeof payload === "string" ? null : decodeMessage(payload);
    if (m) {
      this.ownId = m.connId;
      this.sent++;
      this.intended.push(m.intendedUs);
      this.kit.sentBy(this);
    }
    this.inner.send(payload);
  }

  onMessage(cb: (data: Buffer | string) => void): void {
    this.inner.onMessage((data) => {
      if (this.swallowing) return;
      const m = decodeMessage(data);
      if (m && m.connId === this.ownId) this.forwardedEchoes++;
      else if (m) {
        this.forwardedDeliveries++;
        this.senders.add(m.connId);
      }
      cb(data);
    });
  }

  onClose(cb: (info: CloseInfo) => void): void {
    this.inner.onClose((info) => {
      this.closed = true;
      cb(info);
    });
  }

  close(): void {
    this.inner.close();
  }
}

export class WatchedDriver implements Driver {
  readonly protocol: string;
  readonly connections: WatchedConnection[] = [];
  /** Per connection: messages other members sent while it was open (what it should receive). */
  private readonly owed = new Map<WatchedConnection, number>();
  private waiting: (() => void)[] = [];

  constructor(
    private readonly inner: Driver,
    private readonly barrier = 0,
  ) {
    this.protocol = inner.protocol;
  }

  async connect(opts: Parameters<Driver["connect"]>[0]): Promise<Connection> {
    const conn = new WatchedConnection(await this.inner.connect(opts), this);
    this.connections.push(conn);
    this.owed.set(conn, 0);
    if (this.connections.length < this.barrier) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else for (const release of this.waiting.splice(0)) release();
    return conn;
  }

  sentBy(sender: WatchedConnection): void {
    for (const [c, n] of this.owed) if (c !== sender && !c.closed) this.owed.set(c, n + 1);
  }

  /** Deliveries `conn` was owed (other members' messages sent while it was open). */
  owedTo(conn: WatchedConnection): number {
    return this.owed.get(conn) ?? 0;
  }
}

/** Sends in one turn of the event loop at most this long; then the loop reads replies, heartbeats and aborts. */
export const TURN_SLICE_US = 10_000;
/** Slots this late, while the agent cannot clear its backlog, are shed (capped by message.timeout: a later reply could not count anyway). */
export const SHED_LAG_US = 1_000_000;
/** The clock is read once per this many slots: reading it costs about as much as a cheap send. */
const CHECK_EVERY = 32;

/** Where a schedule's due slots go, and the turn that bounds how many it may hand over now. */
export interface SlotSink {
  isOpen(id: number): boolean;
  send(id: number, intendedUs: number): void;
  /** A slot intended before `turn.shedBeforeUs`: counted as shed, not sent. */
  shed(id: number, intendedUs: number): void;
  readonly turn: SendTurn;
}

/**
 * Bounds the send loop's work per event-loop turn. One JavaScript thread both sends and reads the
 * replies, the hub's heartbeats and its abort: a turn that sends everything due, however far behind,
 * grows with the backlog until the process stalls for seconds (a 23 s stall got the agent dropped by
 * its hub). A turn stops after TURN_SLICE_US and the engine continues on setImmediate, after I/O.
 */
export class SendTurn {
  private deadlineUs = 0;
  private handled = 0;
  private overloaded = false;
  /** The turn has spent its slice: what is still due waits for the next one. */
  exhausted = false;
  /** Slots intended before this are shed rather than sent. */
  shedBeforeUs = -Infinity;

  constructor(
    private readonly monoUs: () => number,
    private readonly shedLagUs: number,
  ) {}

  /**
   * A new turn at `nowUs`. Shedding applies only after a turn that could not send everything due in
   * its slice: a backlog the agent cannot clear. A one-off late wake-up (a preempted process) still
   * sends its few late slots, late and timed from their intended instants.
   */
  begin(nowUs: number): void {
    this.overloaded = this.exhausted;
    this.deadlineUs = nowUs + TURN_SLICE_US;
    this.shedBeforeUs = this.overloaded ? nowUs - this.shedLagUs : -Infinity;
    this.handled = 0;
    this.exhausted = false;
  }

  /** Whether one more slot fits in this turn (false once its slice is spent). */
  more(): boolean {
    if (this.exhausted) return false;
    if (++this.handled % CHECK_EVERY !== 0) return true;
    const now = this.monoUs();
    if (now >= this.deadlineUs) this.exhausted = true;
    // A long turn moves the shed line along with the clock.
    else if (this.overloaded) this.shedBeforeUs = now - this.shedLagUs;
    return !this.exhausted;
  }
}

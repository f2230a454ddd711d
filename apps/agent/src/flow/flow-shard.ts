import { flowRows, type Plan, type TemplateContext } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import type { LookupFunction } from "node:net";
import { classifyHttpError } from "../drivers/http-errors";
import type { ConnectOptions, Connection, Driver } from "../drivers/driver";
import type { ShardAccounting } from "../engine/shard-accounting";
import { ConnectionSetup, type Incoming } from "./connection-setup";
import { EncodeError } from "./body-codec";
import { asJson } from "./flow-codec";
import type { CompiledKind, CompiledMatch, FlowProgram } from "./flow-program";
import { compileRequest, FlowDispatcher, httpBase, HttpStatusError, type CompiledRequest, type CookieJar } from "./http-step";

/**
 * A shard's flow at run time: each connection's setup and template context (its index in the run,
 * its data row, its captures), and sending each rendered message the way its kind says — on the
 * connection (an event, a frame), or as an HTTP request (SSE, polling and HTTP targets publish by
 * request; on an HTTP target the response is the reply).
 */
export class FlowShard {
  private readonly setup: ConnectionSetup;
  private readonly dispatcher: FlowDispatcher;
  private readonly rows: Record<string, unknown>[];
  private readonly indexBase: number;
  private readonly requests = new Map<CompiledKind, CompiledRequest>();
  private readonly jars: (CookieJar | undefined)[] = [];

  constructor(
    plan: Plan,
    program: FlowProgram,
    driver: Driver,
    recorder: IntervalRecorder,
    private readonly accounting: ShardAccounting,
    private readonly monoUs: () => number,
    lookup: LookupFunction | undefined,
    connectTimeoutMs: number,
    /** A reply was settled outside the connection's message handler (an ack, an HTTP response). */
    private readonly afterReply: (id: number) => void,
  ) {
    this.dispatcher = new FlowDispatcher(lookup, connectTimeoutMs);
    this.setup = new ConnectionSetup(plan, driver, recorder, this.dispatcher, monoUs, program.listen);
    this.rows = flowRows(plan.flow!.data);
    this.indexBase = plan.flow!.indexBase ?? 0;
    const base = httpBase(plan.target.url);
    for (const kind of program.kinds) if (kind.request) this.requests.set(kind, compileRequest(kind.request, base, this.dispatcher, plan.target.headers));
  }

  /** Runs connection `id`'s setup; `base` carries the target, source address and lookup (never a room: the flow joins rooms itself). */
  async open(id: number, room: string | undefined, base: ConnectOptions): Promise<{ conn: Connection; connectUs: number; early: Incoming[] }> {
    const connIndex = this.indexBase + id;
    const data = this.rows.length === 0 ? undefined : this.rows[connIndex % this.rows.length];
    const ctx: TemplateContext = { connIndex, connRoom: room, msgId: "", msgSeq: 0, data, vars: {} };
    this.accounting.bindFlow(id, ctx);
    const { jar, ...opened } = await this.setup.open(id, ctx, base);
    this.jars[id] = jar;
    return opened;
  }

  /** Sends the next message of connection `id`, timed from `intendedUs`. */
  send(id: number, conn: Connection, intendedUs: number): void {
    let message: ReturnType<ShardAccounting["flowMessage"]>;
    try {
      message = this.accounting.flowMessage(id, intendedUs);
    } catch (err) {
      // A rendered message its codec cannot encode (a protobuf field of the wrong kind): never sent, counted by class with the reason.
      if (!(err instanceof EncodeError)) throw err;
      return this.accounting.error("encode", err.message);
    }
    const { seq, out, kind } = message;
    const request = this.requests.get(kind);
    if (!request) {
      if (kind.reply === "ack") {
        conn.emit!(out, () => {
          this.accounting.acked(id, seq, this.monoUs());
          this.afterReply(id);
        });
      } else conn.emit!(out);
      return;
    }
    const ctx = this.accounting.flowContext(id)!;
    const jar = (this.jars[id] ??= new Map());
    const check = kind.response;
    // Rendered now, while ctx holds this message (as the request renders before its first await).
    const expected = check?.equals?.(ctx);
    request.run(ctx, jar).then(
      (res) => {
        // SSE and polling: the reply comes on the stream or a poll. HTTP: this response is it, when it passes the check.
        if (!check) return;
        const now = this.monoUs();
        if (responsePasses(check, res.body, expected)) this.accounting.acked(id, seq, now);
        else this.accounting.receivedEvent(id, undefined, res.body, now);
        this.afterReply(id);
      },
      (err: unknown) => {
        const { errorClass, detail } = err instanceof HttpStatusError ? { errorClass: "protocol", detail: err.message } : classifyHttpError(err);
        this.accounting.error(errorClass, detail);
      },
    );
  }

  close(): void {
    void this.dispatcher.close().catch(() => {});
  }
}

/** An HTTP response answers its request when the value at the check's path exists (and equals what was sent). */
function responsePasses(check: CompiledMatch, body: string, expected: string | undefined): boolean {
  if (!check.path) return true;
  const value = check.path(asJson(body));
  if (value === undefined) return false;
  return expected === undefined || (typeof value === "string" ? value : JSON.stringify(value)) === expected;
}

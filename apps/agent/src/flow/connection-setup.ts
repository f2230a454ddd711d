import { type BodyCodec, durationMs, type Plan, type SetupStep, type TemplateContext } from "@volley/contracts";
import { compileText, compileValue } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import { ConnectError } from "../drivers/connect-error";
import type { ConnectOptions, Connection, Driver } from "../drivers/driver";
import { bodyCoder } from "./body-codec";
import { compileMatch, compileOutgoing, type CompiledMatch } from "./flow-program";
import { compilePoll } from "./flow-poll";
import { compileCaptures, compileRequest, cookieHeader, httpBase, type CookieJar, type FlowDispatcher } from "./http-step";

/** A connection's setup metric for step `name`: its time, µs. */
export const setupHistogram = (name: string) => `setup.${name}`;

export interface Incoming {
  event: string | undefined;
  data: unknown;
}

type Step = { name: string; run: (s: SetupState) => Promise<void> };

/** One connection's (or user's) state while its steps run. */
export interface SetupState {
  id: number;
  ctx: TemplateContext;
  jar: CookieJar;
  conn: Connection | undefined;
  connectUs: number;
  /** Messages received during setup and not yet consumed by a waitFor. */
  inbox: Incoming[];
  waiter: ((m: Incoming) => boolean) | undefined;
  base: ConnectOptions;
}

/**
 * How many unconsumed setup messages a connection keeps: for a later waitFor, and handed to the
 * engine when setup ends (a broadcast that reached the connection while it was still setting up is
 * a delivery the server counted, so Volley counts it too).
 */
const INBOX = 10_000;

/**
 * Runs a flow's setup steps for one connection: requests before it connects (log in, make a
 * session), the connect (headers, query and Socket.IO auth from captures, cookies from the
 * requests), then sends, waits and think times on the open connection. Each step other than the
 * connect is timed into `setup.<name>`; a failed step fails the connection with error class
 * `setup.<name>` and the step's own words. The connect is timed as every connect is (connect.time).
 */
export class ConnectionSetup {
  private readonly steps: Step[];
  /** Polling targets: the application's own poll, handed to the driver at connect. */
  private readonly poll: ReturnType<typeof compilePoll>;
  private readonly flowCodec: BodyCodec | undefined;

  constructor(
    plan: Plan,
    private readonly driver: Driver,
    private readonly recorder: IntervalRecorder,
    dispatcher: FlowDispatcher,
    private readonly monoUs: () => number,
    listen: string[],
  ) {
    const base = httpBase(plan.target.url);
    this.flowCodec = plan.flow?.codec;
    this.poll = compilePoll(plan);
    const setup = plan.flow?.setup ?? [];
    const steps = setup.map((step, i) => this.compile(step, i, base, dispatcher, listen));
    // No connect step: it connects after the leading requests and think times, before the first step on the connection.
    if (!setup.some((s) => "connect" in s)) {
      const first = setup.findIndex((s) => "send" in s || "waitFor" in s);
      steps.splice(first < 0 ? steps.length : first, 0, { name: "connect", run: compileConnect({}, listen, driver, this.poll, monoUs) });
    }
    this.steps = steps;
  }

  /** Opens connection `id` through every step; rejects with a ConnectError. */
  async open(id: number, ctx: TemplateContext, base: ConnectOptions): Promise<{ conn: Connection; connectUs: number; early: Incoming[]; jar: CookieJar }> {
    const state: SetupState = { id, ctx, jar: new Map(), conn: undefined, connectUs: 0, inbox: [], waiter: undefined, base };
    try {
      for (const step of this.steps) await step.run(state);
    } catch (err) {
      state.conn?.close();
      throw err;
    }
    // The cookies the setup was given go on with the connection's message requests.
    return { conn: state.conn!, connectUs: state.connectUs, early: state.inbox, jar: state.jar };
  }

  private compile(step: SetupStep, i: number, base: string, dispatcher: FlowDispatcher, listen: string[]): Step {
    const position = i + 1;
    if ("connect" in step) return { name: "connect", run: compileConnect(step.connect, listen, this.driver, this.poll, this.monoUs) };
    if ("think" in step) {
      const ms = durationMs(step.think);
      return { name: `think-${position}`, run: () => new Promise((r) => setTimeout(r, ms)) };
    }
    if ("request" in step) {
      const name = step.request.name ?? `request-${position}`;
      const req = compileRequest(step.request, base, dispatcher, undefined);
      const captures = compileCaptures(step.request.capture);
      return this.timed(name, async (s) => {
        const res = await req.run(s.ctx, s.jar);
        const missing = captures(s.ctx.vars as Record<string, unknown>, { body: res.body, headers: res.headers, jar: s.jar });
        if (missing) throw new Error(`capture ${missing}: not found in the response (HTTP ${res.status}: ${res.body.slice(0, 200)})`);
      });
    }
    if ("send" in step) {
      const { send } = step;
      const name = send.name ?? `send-${position}`;
      const render = compileOutgoing(send, this.flowCodec);
      // An acknowledgement carrying bytes is decoded as the send's codec says (JSON ones come as values already).
      const coder = bodyCoder(send.codec, this.flowCodec);
      const ackValue = (data: unknown) => (coder.json ? data : coder.decode(data));
      const captures = compileCaptures(send.capture);
      const timeoutMs = durationMs(send.timeout);
      return this.timed(name, async (s) => {
        const conn = this.connected(s);
        if (!send.ack) return conn.emit!(render(s.ctx));
        const reply = await withTimeout(new Promise<unknown>((resolve) => conn.emit!(render(s.ctx), resolve)), timeoutMs, "no acknowledgement");
        const missing = captures(s.ctx.vars as Record<string, unknown>, { json: ackValue(reply) });
        if (missing) throw new Error(`capture ${missing}: not found in the acknowledgement ${JSON.stringify(reply)?.slice(0, 200)}`);
      });
    }
    const { waitFor } = step;
    const name = waitFor.name ?? `waitFor-${position}`;
    const match = compileMatch(waitFor.match, waitFor.event, bodyCoder(waitFor.codec, this.flowCodec).decode);
    const captures = compileCaptures(waitFor.capture);
    const timeoutMs = durationMs(waitFor.timeout);
    const what = describeMatch(waitFor.event, waitFor.match);
    return this.timed(name, async (s) => {
      this.connected(s);
      const got = await receive(s, match, timeoutMs, what);
      const missing = captures(s.ctx.vars as Record<string, unknown>, { json: match.decode(got.data) });
      if (missing) throw new Error(`capture ${missing}: not found in ${got.event ?? "the message"}`);
    });
  }

  private timed(name: string, run: (s: SetupState) => Promise<void>): Step {
    const metric = setupHistogram(name);
    return {
      name,
      run: async (s) => {
        const started = this.monoUs();
        try {
          await run(s);
        } catch (err) {
          if (err instanceof ConnectError) throw err;
          throw new ConnectError(`setup.${name}`, (err as Error).message);
        }
        this.recorder.recordMicros(metric, this.monoUs() - started);
      },
    };
  }

  private connected(s: SetupState): Connection {
    if (!s.conn) throw new Error("the connection is not open yet (add a connect step before this one)");
    return s.conn;
  }
}

export function matches(match: CompiledMatch, m: Incoming, ctx: TemplateContext): boolean {
  if (match.event !== undefined && match.event !== m.event) return false;
  if (!match.path) return true;
  const value = match.path(match.decode(m.data));
  if (value === undefined) return false;
  if (!match.equals) return true;
  return (typeof value === "string" ? value : JSON.stringify(value)) === match.equals(ctx);
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

/** A waited-for message in words: `chat with $.id = {{ msg.id }}`. */
export function describeMatch(event: string | undefined, match: { path: string; equals?: string } | undefined): string {
  return `${event ?? "a message"}${match ? ` with ${match.path}${match.equals !== undefined ? ` = ${match.equals}` : ""}` : ""}`;
}

/** The next incoming message that passes `match`: one already in the inbox, else the first to arrive within `timeoutMs`. */
export async function receive(s: SetupState, match: CompiledMatch, timeoutMs: number, what: string): Promise<Incoming> {
  const test = (m: Incoming) => matches(match, m, s.ctx);
  const got = s.inbox.find(test);
  if (got) {
    s.inbox.splice(s.inbox.indexOf(got), 1);
    return got;
  }
  return withTimeout(
    new Promise<Incoming>((resolve) => {
      s.waiter = (m) => {
        if (!test(m)) return false;
        s.waiter = undefined;
        resolve(m);
        return true;
      };
    }),
    timeoutMs,
    `no ${what}`,
  ).finally(() => (s.waiter = undefined));
}

type ConnectStep = { headers?: Record<string, string>; query?: Record<string, string>; auth?: unknown };

/**
 * The connect step: target headers plus the step's (templates), cookies from earlier requests,
 * query parameters, Socket.IO auth; incoming messages go to the waiting step or the inbox.
 */
export function compileConnect(
  connect: ConnectStep,
  listen: string[],
  driver: Driver,
  poll: ReturnType<typeof compilePoll>,
  monoUs: () => number,
): (s: SetupState) => Promise<void> {
  const headers = Object.entries(connect.headers ?? {}).map(([k, v]) => [k, compileText(v)] as const);
  const query = Object.entries(connect.query ?? {}).map(([k, v]) => [k, compileText(v)] as const);
  const auth = connect.auth !== undefined ? compileValue(connect.auth) : undefined;
  // Destinations named by a template are this connection's own: subscribed rendered, reported as the plan spells them.
  const listenPer = listen.some((l) => l.includes("{{")) ? listen.map((l) => compileText(l)) : undefined;
  return async (s) => {
    const h: Record<string, string> = { ...s.base.headers };
    for (const [k, v] of headers) h[k] = v(s.ctx);
    const cookie = cookieHeader(s.jar);
    if (cookie && h.cookie === undefined && h.Cookie === undefined) h.cookie = cookie;
    const url = new URL(s.base.url);
    for (const [k, v] of query) url.searchParams.set(k, v(s.ctx));
    const opts: ConnectOptions = { ...s.base, url: url.toString(), headers: h, listen };
    if (listenPer) {
      opts.listen = listenPer.map((l) => l(s.ctx));
      opts.listenNames = listen;
    }
    if (auth) opts.auth = auth(s.ctx);
    if (poll) opts.poll = poll(s.ctx);
    const started = monoUs();
    const conn = await driver.connect(opts);
    s.connectUs = monoUs() - started;
    s.conn = conn;
    conn.onEvent!((event, data) => {
      const m = { event, data };
      if (s.waiter?.(m)) return;
      if (s.inbox.length >= INBOX) s.inbox.shift();
      s.inbox.push(m);
    });
  };
}

import {
  userStepName,
  userStepPosition,
  compileText,
  defaultConnectionName,
  durationMs,
  HISTOGRAMS,
  stepConnectionName,
  userConnections,
  userConnectUrl,
  walkUserSteps,
  type Plan,
  type Reconnect,
  type Think,
  type UserConnection,
  type UserStep,
} from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import { ConnectError } from "../drivers/connect-error";
import { connectOptionsFor } from "../drivers/connect-options";
import type { Connection, Driver } from "../drivers/driver";
import { compileConnect, describeMatch, receive, withTimeout, type SetupState } from "../flow/connection-setup";
import { bodyCoder } from "../flow/body-codec";
import { compileMatch, compileOutgoing } from "../flow/flow-program";
import { compilePoll } from "../flow/flow-poll";
import { compileCaptures, compileRequest, httpBase, type FlowDispatcher } from "../flow/http-step";
import { compileCondition } from "./user-condition";

/** A user's step histogram: from the step's intended instant to its end, µs. */
export const stepHistogram = (name: string) => `step.${name}`;

/**
 * One of a user's connections (user-connections.ts): its own state (the connection, what arrived on
 * it, the step waiting on it) over the user's template context and cookies, and its reconnect.
 */
export interface UserLink {
  /** The connection's name, as its connect step names it (or main). */
  name: string;
  s: SetupState;
  /** Set by its connect step: the engine calls it when the server closes the connection. */
  onDrop?: (why: string) => void;
  /** A send waiting for its reply on this connection: fails it at once when the connection drops (the reply cannot come). */
  failReply?: (err: Error) => void;
  /** Under way after a drop, with a reconnect policy: resolves true once reconnected. */
  reconnecting?: Promise<boolean>;
}

/** One user while it runs: its connections, and the intended instant of its next step. */
export interface UserRun {
  /** The user's own state (context, cookies, connect options); its first connection's state too. */
  s: SetupState;
  /** Its connections by name, each made at its first connect. */
  links: Map<string, UserLink>;
  /** When the next step is meant to start, µs monotonic: the arrival, then each step's end plus think times. */
  at: number;
  /** Past this (arrival + maxUserTime) the user's next step fails it. */
  deadline: number;
  /** Which use of its slot this user is (with the slot's run-wide index, it makes msg.id unique in the run). */
  serial: number;
  /** Sends so far: the next send's msg.seq. */
  sends: number;
  /** The user has left: a reconnect still under way closes what it opens. */
  left?: boolean;
}

/** A step failed: the user stops, counted under errors.step.<name> with why. */
export class StepFailure extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

/** What running steps needs of the engine. */
export interface UserHost {
  monoUs(): number;
  /** Resolves at `atUs`, to within tens of µs; rejects once the shard stops. */
  sleepUntil(atUs: number): Promise<void>;
  readonly recorder: IntervalRecorder;
  /** A message went out `lagUs` after its intended instant. */
  sent(lagUs: number): void;
  /** A reply arrived (received), or never did (lost). */
  replied(ok: boolean): void;
  connected(u: UserRun, link: UserLink, connectUs: number): void;
  /** `retry`: a reconnect attempt (never a reason to give up on the whole shard). */
  connectFailed(err: unknown, retry?: boolean): void;
  /** A dropped connection came back `afterUs` after the drop, or (undefined) every attempt failed. */
  reconnected(link: UserLink, afterUs: number | undefined): void;
  /** A send that could not go out: the connection was down. */
  unsent(): void;
  /** The user closed a connection itself (a disconnect step). */
  disconnected(u: UserRun, link: UserLink): void;
  random(): number;
}

type Exec = (u: UserRun) => Promise<void>;

/**
 * A users plan's `flow.steps`, compiled once per shard into one function per step. Every step
 * starts at its intended instant (u.at): think times move it forward and are scheduled, not slept
 * from the moment the previous step happened to end, and each timed step records its time from
 * that instant, so a slow server shows in step times rather than in fewer, later steps.
 */
export function compileUserSteps(plan: Plan, host: UserHost, driverOf: (protocol: string) => Driver, dispatcher: FlowDispatcher, listen: string[]): Exec {
  const base = httpBase(plan.target.url);
  const poll = compilePoll(plan);
  const { recorder } = host;
  const steps = plan.flow?.steps ?? [];
  const links = userConnections(plan);
  const fallback = defaultConnectionName(steps);
  const linkOf = linkMaker(plan, links, fallback);
  // One connection: it listens for every event the steps name, as before; several: each for its own steps'.
  const listenOf = links.size <= 1 ? () => listen : linkEvents(steps, fallback);
  const nameOf = (step: UserStep) => stepConnectionName(step, fallback) ?? fallback;

  /** Waits for the step's instant, runs it and times it; a failure names the step. */
  const timed =
    (name: string, run: (u: UserRun) => Promise<void>, record = true): Exec =>
    async (u) => {
      if (host.monoUs() > u.deadline)
        throw new StepFailure(name, `the user was still busy at maxUserTime (${plan.scenario.kind === "users" ? plan.scenario.maxUserTime : ""})`);
      await host.sleepUntil(u.at);
      try {
        await run(u);
      } catch (err) {
        if (err instanceof StepFailure || err instanceof ConnectError || err instanceof Stopped) throw err;
        throw new StepFailure(name, (err as Error).message);
      }
      if (!record) return;
      const now = host.monoUs();
      recorder.recordMicros(stepHistogram(name), now - u.at);
      u.at = now;
    };

  const compileList = (steps: readonly UserStep[], where: string): Exec => {
    const execs = steps.map((step, i) => compileStep(step, userStepPosition(where, i)));
    return async (u) => {
      for (const e of execs) await e(u);
    };
  };

  const compileStep = (step: UserStep, position: string): Exec => {
    if ("request" in step) {
      const name = userStepName(step, position)!;
      const req = compileRequest(step.request, base, dispatcher, plan.target.headers);
      const captures = compileCaptures(step.request.capture);
      return timed(name, async (u) => {
        const res = await req.run(u.s.ctx, u.s.jar);
        const missing = captures(u.s.ctx.vars as Record<string, unknown>, { body: res.body, headers: res.headers, jar: u.s.jar });
        if (missing) throw new Error(`capture ${missing}: not found in the response (HTTP ${res.status}: ${res.body.slice(0, 200)})`);
      });
    }
    if ("connect" in step) {
      const link = nameOf(step);
      const protocol = links.get(link)?.protocol ?? plan.target.protocol;
      // Only the target's own protocol polls (users hold no polling connections).
      const connect = compileConnect(step.connect, listenOf(link), driverOf(protocol), protocol === plan.target.protocol ? poll : undefined, () =>
        host.monoUs(),
      );
      const name = step.connect.name ?? "connect";
      // A URL with templates (a room of the user's own) is the user's: rendered at its connect, kept for its reconnects.
      const url = step.connect.url?.includes("{{") ? compileText(step.connect.url) : undefined;
      const reconnect = step.connect.reconnect ? reconnector(step.connect.reconnect, connect, host) : undefined;
      return async (u) => {
        if (host.monoUs() > u.deadline) throw new StepFailure(name, "the user was still busy at maxUserTime");
        await host.sleepUntil(u.at);
        const l = linkOf(u, link);
        if (l.s.conn) return; // already connected: a connect inside a loop keeps the connection
        if (url) l.s.base = { ...l.s.base, url: userConnectUrl(plan.target.url, protocol, url(u.s.ctx)) };
        try {
          await connect(l.s);
        } catch (err) {
          host.connectFailed(err);
          throw new ConnectFailed();
        }
        host.connected(u, l, l.s.connectUs);
        l.onDrop = (why) => {
          l.failReply?.(new Error(`the server closed the connection before the reply came (${why})`));
          if (reconnect) l.reconnecting = reconnect(u, l);
        };
        u.at = host.monoUs();
      };
    }
    if ("send" in step) {
      const { send } = step;
      const name = userStepName(step, position)!;
      const render = compileOutgoing(send, plan.flow?.codec);
      const coder = bodyCoder(send.codec, plan.flow?.codec);
      const captures = compileCaptures(send.capture);
      const timeoutMs = durationMs(send.timeout);
      const reply = send.reply ? compileMatch(send.reply.match, send.reply.event, coder.decode) : undefined;
      const what = send.reply ? describeMatch(send.reply.event, send.reply.match) : "";
      const awaits = send.ack || reply !== undefined;
      const link = nameOf(step);
      return timed(
        name,
        async (u) => {
          const l = linkOf(u, link);
          const conn = await connection(l, () => host.unsent());
          const ctx = u.s.ctx as { msgSeq: number; msgId: string; connIndex: number };
          ctx.msgSeq = u.sends++;
          ctx.msgId = `${ctx.connIndex}.${u.serial}.${ctx.msgSeq}`;
          host.sent(host.monoUs() - u.at);
          if (!awaits) return conn.emit!(render(u.s.ctx));
          let data: unknown;
          try {
            const dropped = new Promise<never>((_, reject) => (l.failReply = reject));
            if (send.ack) {
              const acked = withTimeout(new Promise<unknown>((resolve) => conn.emit!(render(u.s.ctx), resolve)), timeoutMs, "no acknowledgement");
              data = await Promise.race([acked, dropped]);
              if (!coder.json) data = coder.decode(data);
            } else {
              conn.emit!(render(u.s.ctx));
              data = reply!.decode((await Promise.race([receive(l.s, reply!, timeoutMs, what), dropped])).data);
            }
          } catch (err) {
            host.replied(false);
            throw err;
          } finally {
            l.failReply = undefined;
          }
          host.replied(true);
          recorder.recordMicros(HISTOGRAMS.messageLatency, host.monoUs() - u.at);
          const missing = captures(u.s.ctx.vars as Record<string, unknown>, { json: data });
          if (missing) throw new Error(`capture ${missing}: not found in the reply ${JSON.stringify(data)?.slice(0, 200)}`);
        },
        awaits,
      );
    }
    if ("waitFor" in step) {
      const { waitFor } = step;
      const name = userStepName(step, position)!;
      const match = compileMatch(waitFor.match, waitFor.event, bodyCoder(waitFor.codec, plan.flow?.codec).decode);
      const captures = compileCaptures(waitFor.capture);
      const timeoutMs = durationMs(waitFor.timeout);
      const what = describeMatch(waitFor.event, waitFor.match);
      const link = nameOf(step);
      return timed(name, async (u) => {
        const l = linkOf(u, link);
        await connection(l);
        // A drop meanwhile does not end the wait: with a reconnect policy the event may come on the new connection.
        const got = await receive(l.s, match, timeoutMs, what);
        const missing = captures(u.s.ctx.vars as Record<string, unknown>, { json: match.decode(got.data) });
        if (missing) throw new Error(`capture ${missing}: not found in ${got.event ?? "the message"}`);
      });
    }
    if ("think" in step) {
      const draw = thinkUs(step.think, () => host.random());
      return async (u) => {
        u.at += draw();
      };
    }
    if ("loop" in step) {
      const { loop } = step;
      const body = compileList(loop.steps, `${position}`);
      const count = loop.count ?? Infinity;
      const overUs = loop.over === undefined ? Infinity : durationMs(loop.over) * 1000;
      const holds = loop.while ? compileCondition(loop.while) : () => true;
      const name = loop.name ?? `loop-${position}`;
      const maxUserTime = plan.scenario.kind === "users" ? plan.scenario.maxUserTime : "";
      return async (u) => {
        const began = u.at;
        // `over` ends on the later of the intended timeline and the clock (a pass of sends alone takes no intended time).
        for (let k = 0; k < count && Math.max(u.at, host.monoUs()) - began < overUs && holds(u.s.ctx); k++) {
          // A while-loop's passes may hold no timed step (its capture in a branch not taken): the user's bound is checked here too.
          if (loop.while && Math.max(u.at, host.monoUs()) > u.deadline)
            throw new StepFailure(name, `still looping at maxUserTime (${maxUserTime}): ${loop.while.var} kept the while condition true`);
          const before = u.at;
          await body(u);
          // A pass that took no time (fire-and-forget sends, no think) yields to I/O and timers:
          // a promise chain alone would never let the event loop turn.
          if (u.at === before) await new Promise<void>((resolve) => setImmediate(resolve));
        }
      };
    }
    if ("choice" in step) {
      const branches = step.choice.map((b, k) => ({ weight: b.weight, run: compileList(b.steps, `${position}-${k + 1}`) }));
      const total = branches.reduce((n, b) => n + b.weight, 0);
      return async (u) => {
        let pick = host.random() * total;
        for (const b of branches) {
          pick -= b.weight;
          if (pick < 0) return b.run(u);
        }
        return branches.at(-1)!.run(u);
      };
    }
    if ("if" in step) {
      const holds = compileCondition(step.if);
      const then = compileList(step.steps, `${position}-then`);
      const otherwise = step.else ? compileList(step.else, `${position}-else`) : async () => {};
      return async (u) => (holds(u.s.ctx) ? then(u) : otherwise(u));
    }
    const link = nameOf(step);
    return async (u) => {
      await host.sleepUntil(u.at);
      const l = u.links.get(link);
      if (!l?.s.conn) return;
      host.disconnected(u, l);
    };
  };

  return compileList(steps, "");
}

/**
 * Makes a user's connection state at its first use: the first connection's is the user's own
 * (u.s); another shares the user's context and cookies and connects with its own protocol and URL.
 */
function linkMaker(plan: Plan, links: ReadonlyMap<string, UserConnection>, fallback: string): (u: UserRun, name: string) => UserLink {
  return (u, name) => {
    let l = u.links.get(name);
    if (l) return l;
    const spec = links.get(name);
    const own = spec !== undefined && (spec.protocol !== plan.target.protocol || spec.url !== new URL(plan.target.url).toString());
    const base = own
      ? connectOptionsFor({ ...plan.target, protocol: spec.protocol, url: spec.url }, { localAddress: u.s.base.localAddress, lookup: u.s.base.lookup }, true)
      : u.s.base;
    if (name === fallback) {
      u.s.base = base;
      l = { name, s: u.s };
    } else l = { name, s: { ...u.s, conn: undefined, connectUs: 0, inbox: [], waiter: undefined, base } };
    u.links.set(name, l);
    return l;
  };
}

/** Each connection's events: the ones its own waitFor steps and replies name (what a STOMP or Socket.IO 2 connection subscribes to). */
function linkEvents(steps: readonly UserStep[], fallback: string): (name: string) => string[] {
  const by = new Map<string, Set<string>>();
  const add = (name: string, event: string | undefined) => {
    if (event === undefined) return;
    if (!by.has(name)) by.set(name, new Set());
    by.get(name)!.add(event);
  };
  for (const { step } of walkUserSteps(steps)) {
    if ("waitFor" in step) add(step.waitFor.connection ?? fallback, step.waitFor.event);
    if ("send" in step) add(step.send.connection ?? fallback, step.send.reply?.event);
  }
  return (name) => [...(by.get(name) ?? [])];
}

/**
 * The user's open connection: the current one, or the one a reconnect under way brings back;
 * `unsent` counts a send that cannot go out. Fails saying why there is none.
 */
async function connection(l: UserLink, unsent?: () => void): Promise<Connection> {
  if (!l.s.conn && l.reconnecting) await l.reconnecting;
  if (l.s.conn) return l.s.conn;
  unsent?.();
  throw new Error(
    l.reconnecting
      ? "the server closed the connection and every reconnect attempt failed"
      : "the connection is closed (the server closed it, or a disconnect step ran): give the connect step a reconnect policy, or connect again first",
  );
}

/**
 * A connect step's reconnect policy, as a function that brings a dropped user's connection back:
 * waits (none for immediate; delay doubling to maxDelay for backoff, each ± jitter), reconnects
 * through the same step (same headers, query, captures), up to maxAttempts. Counts
 * connections.reconnected with reconnect.time (drop to reopen), or connections.reconnect_failed.
 */
function reconnector(policy: Reconnect, connect: (s: SetupState) => Promise<void>, host: UserHost): (u: UserRun, l: UserLink) => Promise<boolean> {
  const delayUs = durationMs(policy.delay) * 1000;
  const maxDelayUs = durationMs(policy.maxDelay) * 1000;
  return async (u, l) => {
    const droppedUs = host.monoUs();
    let waitUs = policy.policy === "immediate" ? 0 : delayUs;
    try {
      for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
        await host.sleepUntil(host.monoUs() + waitUs * (1 + policy.jitter * (2 * host.random() - 1)));
        if (u.left) return false;
        try {
          await connect(l.s);
        } catch (err) {
          host.connectFailed(err, true);
          if (policy.policy === "backoff") waitUs = Math.min(waitUs * 2, maxDelayUs);
          continue;
        }
        if (u.left) {
          l.s.conn?.close();
          l.s.conn = undefined;
          return false;
        }
        host.connected(u, l, l.s.connectUs);
        host.reconnected(l, host.monoUs() - droppedUs);
        return true;
      }
      host.reconnected(l, undefined);
    } catch {
      // The shard stopped while the user waited to reconnect.
    }
    return false;
  };
}

/** The shard stopped (its end, or an abort) while the user waited. */
export class Stopped extends Error {}

/** A connect failed; the engine already counted it (connections.failed, errors.<class>). */
export class ConnectFailed extends Error {}

/** Draws think times in µs: fixed, uniform, exponential or normal (never below 0). */
export function thinkUs(think: Think, random: () => number): () => number {
  if (typeof think === "number" || typeof think === "string") {
    const us = durationMs(think) * 1000;
    return () => us;
  }
  if ("min" in think) {
    const min = durationMs(think.min) * 1000;
    const span = durationMs(think.max) * 1000 - min;
    return () => min + random() * span;
  }
  const mean = durationMs(think.mean) * 1000;
  if (think.distribution === "exponential") return () => -Math.log(1 - random()) * mean;
  const sd = durationMs(think.stddev ?? 0) * 1000;
  // Box–Muller: one standard normal from two uniforms.
  return () => Math.max(0, mean + sd * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
}

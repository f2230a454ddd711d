import type { UserStep } from "./flow";
import type { Plan } from "./plan";
import { schemeFix, URL_SCHEMES, type Protocol } from "./target";

/**
 * A user's connections (scenario kind `users`). A user may hold several at once, an SSE feed and a
 * WebSocket, each opened by a connect step that names it (`connection: feed`) and may give its own
 * `protocol` and `url` (absent: the target's). Sends, waits and disconnects name the connection they
 * use; naming none, they use the connection of the user's first connect step in document order,
 * which is called `main` when it has no name. A connect without `connection` opens that one too.
 */
export const MAIN_CONNECTION = "main";

/** One connection of a user, as the first connect step that opens it defines it. */
export interface UserConnection {
  name: string;
  protocol: Protocol;
  /** Absolute, resolved against target.url. */
  url: string;
  /** The connect step's position (userStepPosition). */
  position: string;
}

type ConnectStep = Extract<UserStep, { connect: unknown }>["connect"];

/** Every step of a list, nested ones included, in document order, with its path under the list. */
export function* walkUserSteps(steps: readonly UserStep[], at: (string | number)[] = []): Generator<{ step: UserStep; path: (string | number)[] }> {
  for (const [i, step] of steps.entries()) {
    const path = [...at, i];
    yield { step, path };
    if ("loop" in step) yield* walkUserSteps(step.loop.steps, [...path, "loop", "steps"]);
    if ("choice" in step) for (const [k, b] of step.choice.entries()) yield* walkUserSteps(b.steps, [...path, "choice", k, "steps"]);
    if ("if" in step) {
      yield* walkUserSteps(step.steps, [...path, "steps"]);
      if (step.else) yield* walkUserSteps(step.else, [...path, "else"]);
    }
  }
}

/** The name of the connection steps that name none use: the first connect step's. */
export function defaultConnectionName(steps: readonly UserStep[]): string {
  for (const { step } of walkUserSteps(steps)) if ("connect" in step) return step.connect.connection ?? MAIN_CONNECTION;
  return MAIN_CONNECTION;
}

/** The connection a connect, send, waitFor or disconnect step opens or uses; undefined for other steps. */
export function stepConnectionName(step: UserStep, fallback: string): string | undefined {
  if ("connect" in step) return step.connect.connection ?? fallback;
  if ("send" in step) return step.send.connection ?? fallback;
  if ("waitFor" in step) return step.waitFor.connection ?? fallback;
  if ("disconnect" in step) return step.disconnect === true ? fallback : step.disconnect.connection;
  return undefined;
}

/**
 * Where a connect step's connection goes: its url resolved against target.url. A relative one (or
 * none) keeps the target's host and takes the scheme the protocol connects with, so an SSE feed
 * beside a ws:// target is http://, a WebSocket beside an http:// target ws://.
 */
export function userConnectUrl(targetUrl: string, protocol: Protocol, url: string | undefined): string {
  const absolute = url !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(url.trim());
  const u = new URL(url?.trim() ?? targetUrl, targetUrl);
  if (absolute) return u.toString();
  const schemes = URL_SCHEMES[protocol].schemes;
  if (!schemes.includes(u.protocol)) {
    const secure = u.protocol === "https:" || u.protocol === "wss:";
    const web = schemes.includes("ws:") ? (secure ? "wss:" : "ws:") : secure ? "https:" : "http:";
    u.protocol = web;
  }
  return u.toString();
}

/** The protocol of the connection a step uses (its first connect's, else the target's); the target's for steps on none. */
export function stepProtocols(steps: readonly UserStep[], target: Protocol): (step: UserStep) => Protocol {
  const fallback = defaultConnectionName(steps);
  const by = new Map<string, Protocol>();
  for (const { step } of walkUserSteps(steps)) {
    if (!("connect" in step)) continue;
    const name = step.connect.connection ?? fallback;
    if (!by.has(name)) by.set(name, step.connect.protocol ?? target);
  }
  return (step) => by.get(stepConnectionName(step, fallback) ?? "") ?? target;
}

/** Every connection the steps open, by name, as its first connect step defines it. */
export function userConnections(plan: Pick<Plan, "target" | "flow">): Map<string, UserConnection> {
  const steps = plan.flow?.steps ?? [];
  const fallback = defaultConnectionName(steps);
  const out = new Map<string, UserConnection>();
  for (const { step, path } of walkUserSteps(steps)) {
    if (!("connect" in step)) continue;
    const name = step.connect.connection ?? fallback;
    if (out.has(name)) continue;
    const protocol = step.connect.protocol ?? plan.target.protocol;
    out.set(name, { name, protocol, url: safeUrl(plan.target.url, protocol, step.connect.url), position: positionOf(path) });
  }
  return out;
}

const safeUrl = (targetUrl: string, protocol: Protocol, url: string | undefined) => {
  try {
    return userConnectUrl(targetUrl, protocol, url);
  } catch {
    return url ?? targetUrl;
  }
};

/** A step path under flow.steps as its position (see userStepPosition): [2, loop, steps, 0] is 3-1. */
const positionOf = (path: (string | number)[]) =>
  path
    .filter((p) => typeof p === "number")
    .map((n) => (n as number) + 1)
    .join("-");

/**
 * Checks a user's connections, each refusal naming the step: a connect on a protocol users cannot
 * hold (`protocols`: the ones they can) or to a URL its protocol cannot connect to, one name opened
 * by two connect steps that differ in protocol or URL (or opened again while it is still open), a
 * step naming a connection no earlier step opens, and on an HTTP target a connection it cannot have.
 */
export function checkUserConnections(
  plan: Pick<Plan, "target" | "flow">,
  protocols: ReadonlySet<string>,
  issue: (path: (string | number)[], message: string) => void,
): void {
  const steps = plan.flow?.steps ?? [];
  const fallback = defaultConnectionName(steps);
  const target = plan.target.protocol;
  const named = [...walkUserSteps(steps)].some(({ step }) => "connect" in step && step.connect.connection !== undefined);
  const opened = new Map<string, { protocol: Protocol; url: string; at: string }>();
  const at = (path: (string | number)[]) => ["flow", "steps", ...path];
  /** Checks a connect step; false when it redefines a connection (said already). */
  const connect = (c: ConnectStep, path: (string | number)[]): boolean => {
    const name = c.connection ?? fallback;
    const protocol = c.protocol ?? target;
    const here = at(path);
    if (c.protocol === "http")
      issue([...here, "connect", "protocol"], "HTTP has no connection to hold: make HTTP calls with request steps (capture from their responses)");
    else if (protocol === "http")
      issue(
        here,
        "an HTTP target has no connection to open, send on or wait on: use request steps (capture from their responses), or give the connect a protocol and url of its own, like protocol: sse, url: /events",
      );
    else if (!protocols.has(protocol))
      issue([...here, "connect", "protocol"], `users cannot hold a ${protocol} connection yet: use ${[...protocols].filter((p) => p !== "http").join(", ")}`);
    else if (protocol !== target && (protocol === "long-polling" || protocol === "short-polling"))
      // The application's poll (target.polling.poll) belongs to the target's own connection.
      issue(
        [...here, "connect", "protocol"],
        `a ${protocol} connection polls the application's route in target.polling.poll, which belongs to the target: make the plan's target the ${protocol} one (target.protocol: ${protocol}) and open the others with a protocol of their own`,
      );
    let url: string;
    try {
      url = userConnectUrl(plan.target.url, protocol, c.url);
    } catch {
      issue([...here, "connect", "url"], "is not a URL: give an absolute one (http://… or ws://…) or a path relative to target.url, like /events");
      return true;
    }
    if (!URL_SCHEMES[protocol].schemes.includes(new URL(url).protocol)) issue([...here, "connect", "url"], schemeFix(protocol));
    const first = opened.get(name);
    const where = here.join(".");
    if (!first) {
      opened.set(name, { protocol, url, at: where });
      return true;
    }
    if (first.protocol === protocol && first.url === url) return true;
    issue(
      [...here, "connect"],
      `connection "${name}" is already opened by ${first.at} (${first.protocol} to ${first.url}); this step opens it as ${protocol} to ${url}: give this one its own name, like connection: ${name}-2`,
    );
    return false;
  };
  /** Names certainly open at this point: a second connect of one while it is open would do nothing. */
  const walk = (list: readonly UserStep[], path: (string | number)[], open: Set<string>): Set<string> => {
    for (const [i, step] of list.entries()) {
      const here = [...path, i];
      const name = stepConnectionName(step, fallback);
      if ("connect" in step) {
        if (connect(step.connect, here) && named && open.has(name!))
          issue(
            at(here),
            `connection "${name}" is already open here (an earlier connect opened it and no disconnect closed it): remove this connect, or disconnect it first`,
          );
        open.add(name!);
      } else if (name !== undefined) {
        const kind = "send" in step ? "send" : "waitFor" in step ? "waitFor" : "disconnect";
        const own = (step as Record<string, { connection?: string } | true>)[kind];
        const field = typeof own === "object" && own.connection !== undefined ? [kind, "connection"] : [];
        if ((opened.get(name)?.protocol ?? target) === "http") {
          // On its own connect step the refusal is said there; without one, here.
          if (!opened.has(name))
            issue(at(here), "an HTTP target has no connection to open, send on or wait on: use request steps (capture from their responses)");
        } else if (opened.size > 0 && !opened.has(name))
          issue(
            [...at(here), ...field],
            `${kind} uses connection "${name}", which no earlier step opens (it has ${[...opened.keys()].join(", ")}): add { connect: { connection: ${name} } } before it, or name one of those`,
          );
        if (kind === "disconnect") open.delete(name);
      } else if ("loop" in step) {
        const after = walk(step.loop.steps, [...here, "loop", "steps"], new Set(open));
        // A loop may not run at all (while): what is certainly open after it was open before it and after a pass.
        for (const n of [...open]) if (!after.has(n)) open.delete(n);
      } else if ("choice" in step) {
        const ends = step.choice.map((b, k) => walk(b.steps, [...here, "choice", k, "steps"], new Set(open)));
        open = intersect(ends);
      } else if ("if" in step) {
        const then = walk(step.steps, [...here, "steps"], new Set(open));
        const otherwise = walk(step.else ?? [], [...here, "else"], new Set(open));
        open = intersect([then, otherwise]);
      }
    }
    return open;
  };
  walk(steps, [], new Set());
}

const intersect = (sets: Set<string>[]): Set<string> => new Set([...(sets[0] ?? [])].filter((n) => sets.every((s) => s.has(n))));

import { createServer, type ServerResponse } from "node:http";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import {
  asObject,
  HttpError,
  idMaker,
  optionalString,
  readJson,
  requiredString,
  sendError,
  sendJson,
  serveStats,
  type TestApp,
  type TestAppOptions,
} from "./app-http";

export const LONGPOLL_CHAT_PATHS = { session: "/chat/session", send: "/chat/send", poll: "/chat/poll" } as const;
/** How long a poll is held when it names no `?wait=`, and the most it may ask for. */
export const LONGPOLL_DEFAULT_WAIT_MS = 20_000;
export const LONGPOLL_MAX_WAIT_MS = 120_000;
/** At most this many messages per poll response (the cursor says where the next poll resumes). */
export const LONGPOLL_MAX_BATCH = 1000;

export interface LongpollChatStats {
  /** Sessions made by `POST /chat/session`. */
  sessions: number;
  /** Accepted `POST /chat/send`s. */
  sends: number;
  /** `GET /chat/poll`s answered or still held (a refused one is not counted). */
  polls: number;
  /** Polls being held right now. */
  waitingPolls: number;
  /** Messages returned by polls, summed over responses (one message seen by 3 sessions counts 3). */
  messagesDelivered: number;
}

export interface PollMessage {
  id: string;
  /** Position in the chat's log: a poll's `cursor` is the last seq it returned. */
  seq: number;
  /** The sender's sessionId. */
  from: string;
  text: string;
  ts: number;
  clientMsgId: string | null;
}

interface Waiter {
  res: ServerResponse;
  after: number;
  timer: NodeJS.Timeout;
}

/**
 * A long-polling chat with its own routes, as pre-WebSocket apps (and apps behind strict proxies)
 * have: `POST /chat/session` → 201 `{ sessionId, cursor }`; `POST /chat/send` JSON `{ sessionId,
 * text, clientMsgId? }` → 202 `{ id }`, the message going to every session (the sender's
 * included) that existed when it was sent; `GET /chat/poll?sessionId=…&cursor=N&wait=ms` answers
 * `{ messages, cursor }` at once when there are messages after N (or after the session began,
 * whichever is later), else holds up to `wait` ms (20 s by default) and answers as soon as one
 * arrives, or empty at the deadline. Without `cursor` the session's start is used.
 */
export async function startLongpollChat(options: TestAppOptions = {}): Promise<TestApp<LongpollChatStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: LongpollChatStats = { sessions: 0, sends: 0, polls: 0, waitingPolls: 0, messagesDelivered: 0 };
  const stats = () => ({ ...counters });
  const sessions = new Map<string, { start: number }>();
  const log: PollMessage[] = [];
  const waiters = new Set<Waiter>();
  const sessionIds = idMaker("s");
  const messageIds = idMaker("m");

  const answer = (res: ServerResponse, after: number) => {
    // seq n sits at log[n - 1]: the log is never trimmed (a test app lives for one run).
    const messages = log.slice(after, after + LONGPOLL_MAX_BATCH);
    counters.messagesDelivered += messages.length;
    sendJson(res, 200, { messages, cursor: messages.at(-1)?.seq ?? after });
  };

  const sessionOf = (id: string | undefined | null) => {
    const session = id ? sessions.get(id) : undefined;
    if (!session)
      throw new HttpError(404, `unknown sessionId ${JSON.stringify(id ?? "")}: POST ${LONGPOLL_CHAT_PATHS.session} first and send the sessionId it returns`);
    return session;
  };

  const integer = (raw: string | null, field: string, fallback: number, max: number) => {
    if (raw === null || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `${field} must be a whole number from 0 to ${max}`);
    return n;
  };

  const poll = (url: URL, res: ServerResponse) => {
    const session = sessionOf(url.searchParams.get("sessionId"));
    const cursor = integer(url.searchParams.get("cursor"), "cursor", session.start, Number.MAX_SAFE_INTEGER);
    const wait = integer(url.searchParams.get("wait"), "wait", LONGPOLL_DEFAULT_WAIT_MS, LONGPOLL_MAX_WAIT_MS);
    const after = Math.max(cursor, session.start);
    counters.polls++;
    if (log.length > after || wait === 0) return answer(res, after);
    const waiter: Waiter = { res, after, timer: setTimeout(() => release(waiter), wait) };
    waiters.add(waiter);
    counters.waitingPolls++;
    res.on("close", () => release(waiter, false));
  };

  /** Ends a held poll (answering it unless the client has gone). */
  const release = (waiter: Waiter, respond = true) => {
    if (!waiters.delete(waiter)) return;
    counters.waitingPolls--;
    clearTimeout(waiter.timer);
    if (respond && !waiter.res.destroyed) answer(waiter.res, waiter.after);
  };

  const routes: Record<string, (url: URL, body: Record<string, unknown>, res: ServerResponse) => void> = {
    [`POST ${LONGPOLL_CHAT_PATHS.session}`]: (_url, _body, res) => {
      const sessionId = sessionIds();
      sessions.set(sessionId, { start: log.length });
      counters.sessions++;
      sendJson(res, 201, { sessionId, cursor: log.length });
    },
    [`POST ${LONGPOLL_CHAT_PATHS.send}`]: (_url, body, res) => {
      const from = requiredString(body, "sessionId");
      sessionOf(from);
      const text = requiredString(body, "text");
      const clientMsgId = optionalString(body, "clientMsgId") ?? null;
      counters.sends++;
      const message: PollMessage = { id: messageIds(), seq: log.length + 1, from, text, ts: Date.now(), clientMsgId };
      log.push(message);
      sendJson(res, 202, { id: message.id });
      for (const w of waiters) release(w);
    },
  };

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === LONGPOLL_CHAT_PATHS.poll) {
      try {
        return poll(url, res);
      } catch (err) {
        return sendError(res, err);
      }
    }
    const route = routes[`${req.method} ${url.pathname}`];
    if (!route) {
      const known = Object.values(LONGPOLL_CHAT_PATHS).includes(url.pathname as never);
      return sendError(
        res,
        new HttpError(
          known ? 405 : 404,
          `use POST ${LONGPOLL_CHAT_PATHS.session}, POST ${LONGPOLL_CHAT_PATHS.send}, GET ${LONGPOLL_CHAT_PATHS.poll} or GET /stats`,
        ),
      );
    }
    void readJson(req)
      .then((raw) => route(url, asObject(raw, `${req.method} ${url.pathname}`), res))
      .catch((err: unknown) => sendError(res, err));
  });

  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: httpUrl,
    httpUrl,
    stats,
    async close() {
      for (const w of waiters) release(w, false);
      await closeHttp(http);
    },
  };
}

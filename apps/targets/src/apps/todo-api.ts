import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
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

export const TODO_API_PATHS = { login: "/api/login", todos: "/api/todos" } as const;

export interface TodoApiStats {
  /** Successful `POST /api/login`s. */
  logins: number;
  /** Todos made by `POST /api/todos`. */
  created: number;
  /** Answered `GET /api/todos`. */
  listed: number;
  /** Requests refused 401 (no or a wrong bearer token / session cookie). */
  unauthorized: number;
}

export interface TodoApiOptions extends TestAppOptions {
  /**
   * The todo store's throughput: it writes one todo at a time, each taking 1/createsPerSecond s
   * (as a database with one writer does), so up to this many creates a second are answered at
   * once and more queue up, each answered later than the one before. Absent: no limit.
   */
  createsPerSecond?: number;
}

export interface Todo {
  id: string;
  title: string;
  owner: string;
  /** Whatever the client sent as `ref` (the app keeps it, as apps keep client references). */
  ref: string | null;
  createdAt: number;
}

/**
 * A REST todo API as small SaaS back ends have: `POST /api/login` JSON `{ user, password }`
 * (password "secret") → 200 `{ token, user }` and a `sid` session cookie; `POST /api/todos`
 * with `authorization: Bearer <token>` JSON `{ title, ref? }` → 201 the todo `{ id, title, owner,
 * ref, createdAt }`; `GET /api/todos` (bearer token or the `sid` cookie) → 200 `{ items, count }`,
 * the caller's todos, newest first, at most 20. Without valid credentials: 401 `{ error }`.
 * With `createsPerSecond`, creates queue for the store's one writer (see TodoApiOptions).
 */
export async function startTodoApi(options: TodoApiOptions = {}): Promise<TestApp<TodoApiStats>> {
  const { port = 0, host = "127.0.0.1", createsPerSecond } = options;
  const writeMs = createsPerSecond ? 1000 / createsPerSecond : 0;
  /** When the writer is free again (performance.now() ms). */
  let writerFreeAt = 0;
  const written = async (): Promise<void> => {
    if (writeMs === 0) return;
    const now = performance.now();
    writerFreeAt = Math.max(now, writerFreeAt) + writeMs;
    await new Promise((resolve) => setTimeout(resolve, writerFreeAt - now));
  };
  const counters: TodoApiStats = { logins: 0, created: 0, listed: 0, unauthorized: 0 };
  const stats = () => ({ ...counters });
  /** token or session id → user */
  const tokens = new Map<string, string>();
  const sessions = new Map<string, string>();
  const todos = new Map<string, Todo[]>();
  const todoIds = idMaker("t");

  const userOf = (req: IncomingMessage, cookieToo: boolean): string => {
    const bearer = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const user = bearer ? tokens.get(bearer) : undefined;
    if (user) return user;
    if (cookieToo) {
      const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
      const byCookie = sid ? sessions.get(sid) : undefined;
      if (byCookie) return byCookie;
    }
    counters.unauthorized++;
    throw new HttpError(401, `log in first (POST ${TODO_API_PATHS.login}) and send authorization: Bearer <token>`);
  };

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const route = `${req.method} ${new URL(req.url ?? "/", "http://x").pathname}`;
    void (async () => {
      if (route === `POST ${TODO_API_PATHS.login}`) {
        const body = asObject(await readJson(req), route);
        const user = requiredString(body, "user");
        if (optionalString(body, "password") !== "secret") throw new HttpError(401, "wrong user or password");
        const token = randomBytes(16).toString("hex");
        const sid = randomBytes(16).toString("hex");
        tokens.set(token, user);
        sessions.set(sid, user);
        counters.logins++;
        res.setHeader("set-cookie", `sid=${sid}; Path=/; HttpOnly; SameSite=Lax`);
        return sendJson(res, 200, { token, user });
      }
      if (route === `POST ${TODO_API_PATHS.todos}`) {
        const user = userOf(req, false);
        const body = asObject(await readJson(req), route);
        const todo: Todo = {
          id: todoIds(),
          title: requiredString(body, "title"),
          owner: user,
          ref: optionalString(body, "ref") ?? null,
          createdAt: Date.now(),
        };
        await written();
        const list = todos.get(user) ?? [];
        list.push(todo);
        todos.set(user, list);
        counters.created++;
        return sendJson(res, 201, todo);
      }
      if (route === `GET ${TODO_API_PATHS.todos}`) {
        const list = todos.get(userOf(req, true)) ?? [];
        counters.listed++;
        return sendJson(res, 200, { items: list.slice(-20).reverse(), count: list.length });
      }
      throw new HttpError(404, `use POST ${TODO_API_PATHS.login}, POST or GET ${TODO_API_PATHS.todos}, or GET /stats`);
    })().catch((err: unknown) => sendError(res, err));
  });

  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: `${httpUrl}/api`,
    httpUrl,
    stats,
    async close() {
      await closeHttp(http);
    },
  };
}

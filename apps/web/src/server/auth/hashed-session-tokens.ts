import { createHash } from "node:crypto";
import type { BetterAuthOptions } from "better-auth";
import type { DBAdapter, DBTransactionAdapter, Where } from "better-auth/adapters";

/**
 * The value `sessions.token` holds for a session cookie's token: its SHA-256, hex (migration 0019
 * computes the same in SQL for the rows written before). The token is 32 random characters, so a
 * plain hash is enough; what matters is that the stored value is not itself a cookie.
 */
const hashSessionToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

type AdapterFactory = (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions>;
type Row = Record<string, unknown> & { token?: unknown };

const isSessionToken = (model: string, w: Where) => model === "session" && w.field === "token";

/**
 * The where clauses with every session token replaced by its hash, and the plain token of each
 * hash they name (to give rows found by a token their plain token back, as better-auth expects).
 */
function hashWhere(model: string, where: Where[] | undefined): { where: Where[] | undefined; plain: Map<string, string> } {
  const plain = new Map<string, string>();
  const hash = (v: unknown) => {
    if (typeof v !== "string") return v;
    const h = hashSessionToken(v);
    plain.set(h, v);
    return h;
  };
  const mapped = where?.map((w) => {
    if (!isSessionToken(model, w)) return w;
    const value = Array.isArray(w.value) ? (w.value as unknown[]).map(hash) : hash(w.value);
    return { ...w, value } as Where;
  });
  return { where: mapped, plain };
}

/** A session row with its plain token where the caller named it; rows found otherwise keep the hash (it opens nothing). */
function restore<T>(model: string, row: T, plain: Map<string, string>): T {
  if (model !== "session" || row === null || typeof row !== "object") return row;
  const r = row as Row;
  if (typeof r.token !== "string") return row;
  const token = plain.get(r.token);
  return token === undefined ? row : ({ ...r, token } as T);
}

function hashData(model: string, data: Record<string, unknown>, plain: Map<string, string>): Record<string, unknown> {
  if (model !== "session" || typeof data.token !== "string") return data;
  const h = hashSessionToken(data.token);
  plain.set(h, data.token);
  return { ...data, token: h };
}

function wrap(inner: DBTransactionAdapter<BetterAuthOptions>): DBTransactionAdapter<BetterAuthOptions> {
  return {
    ...inner,
    create: async <T extends Record<string, unknown>, R = T>(args: Parameters<DBAdapter["create"]>[0] & { data: Omit<T, "id"> }) => {
      const plain = new Map<string, string>();
      const created = await inner.create<T, R>({ ...args, data: hashData(args.model, args.data, plain) as typeof args.data });
      return restore(args.model, created, plain);
    },
    findOne: async <T>(args: Parameters<DBAdapter["findOne"]>[0]) => {
      const { where, plain } = hashWhere(args.model, args.where);
      return restore(args.model, await inner.findOne<T>({ ...args, where: where ?? [] }), plain);
    },
    findMany: async <T>(args: Parameters<DBAdapter["findMany"]>[0]) => {
      const { where, plain } = hashWhere(args.model, args.where);
      const rows = await inner.findMany<T>({ ...args, where });
      return rows.map((row) => restore(args.model, row, plain));
    },
    count: async (args) => inner.count({ ...args, where: hashWhere(args.model, args.where).where }),
    update: async <T>(args: Parameters<DBAdapter["update"]>[0]) => {
      const { where, plain } = hashWhere(args.model, args.where);
      const updated = await inner.update<T>({ ...args, where: where ?? [], update: hashData(args.model, args.update, plain) });
      return restore(args.model, updated, plain);
    },
    updateMany: async (args) => {
      const { where, plain } = hashWhere(args.model, args.where);
      return inner.updateMany({ ...args, where: where ?? [], update: hashData(args.model, args.update, plain) });
    },
    delete: async (args) => inner.delete({ ...args, where: hashWhere(args.model, args.where).where ?? [] }),
    deleteMany: async (args) => inner.deleteMany({ ...args, where: hashWhere(args.model, args.where).where ?? [] }),
    consumeOne: async <T>(args: Parameters<DBAdapter["consumeOne"]>[0]) => {
      const { where, plain } = hashWhere(args.model, args.where);
      return restore(args.model, await inner.consumeOne<T>({ ...args, where: where ?? [] }), plain);
    },
    incrementOne: async <T>(args: Parameters<DBAdapter["incrementOne"]>[0]) => {
      const { where, plain } = hashWhere(args.model, args.where);
      return restore(args.model, await inner.incrementOne<T>({ ...args, where: where ?? [] }), plain);
    },
  };
}

/**
 * better-auth's database with session tokens hashed at rest: every session row created, looked up,
 * updated or deleted by its token goes through hashSessionToken, so `sessions.token` never holds a
 * value that signs into a cookie (with AUTH_SECRET, a database reader could otherwise sign in as
 * anyone with a live session). better-auth has no option for this; its whole session store runs
 * through this adapter interface (internal-adapter: createSession, findSession(s), updateSession,
 * deleteSession(s)), which this wraps.
 */
export function hashedSessionTokens(factory: AdapterFactory): AdapterFactory {
  return (options) => {
    const inner = factory(options);
    // better-auth runs sign-up (and the session it creates) in a transaction with the adapter this
    // hands out, so that one hashes too.
    return { ...inner, ...wrap(inner), transaction: (callback) => inner.transaction((trx) => callback(wrap(trx))) };
  };
}

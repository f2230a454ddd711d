import { toNextJsHandler } from "better-auth/next-js";
import { errorResponse } from "@/server/http/api-handler";
import { getAuth } from "@/server/auth/better-auth";
import { reserveSignIn } from "@/server/auth/account-throttle";
import { AUTH_BODY_LIMIT, readBodyBytes } from "@/server/http/body-limit";
import { ApiError, classifyError } from "@/server/http/errors";
import { getLogger } from "@/server/http/log";
import { getDb } from "@/server/http/services";
import { limitSignIn } from "@/server/http/rate-limit";

/**
 * better-auth's endpoints (/api/auth/sign-up/email, /sign-in/email, /sign-out, /get-session,
 * /organization/*). Sign-in and sign-up are rate limited per client address, failed sign-ins also
 * per account (account-throttle.ts); bodies are limited to AUTH_BODY_LIMIT (413); errors before
 * better-auth answers use the API's one error shape.
 */
const LIMITED = /\/api\/auth\/sign-(in|up)\//;
const SIGN_IN = /\/api\/auth\/sign-in\/email$/;

/** The email a sign-in names, for the per-account limit; null when the body has none (better-auth then answers 400). */
function emailOf(body: Uint8Array): string | null {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as unknown;
    const email = typeof parsed === "object" && parsed !== null ? (parsed as { email?: unknown }).email : undefined;
    return typeof email === "string" && email.trim() !== "" ? email : null;
  } catch {
    return null;
  }
}

async function handle(req: Request, method: "GET" | "POST"): Promise<Response> {
  try {
    if (method === "POST" && LIMITED.test(new URL(req.url).pathname)) await limitSignIn(req);
    const handlers = toNextJsHandler(getAuth(req.headers));
    if (method === "GET") return await handlers.GET(req);
    // Read here, bounded, so better-auth never buffers an unbounded body.
    const body = await readBodyBytes(req, AUTH_BODY_LIMIT, "sign-in, sign-up and the other /api/auth routes");
    const headers = new Headers(req.headers);
    headers.delete("content-length");
    const forward = new Request(req.url, { method, headers, body: body.byteLength > 0 ? body : undefined, signal: req.signal });
    const email = SIGN_IN.test(new URL(req.url).pathname) ? emailOf(body) : null;
    if (email === null) return await handlers.POST(forward);
    const attempt = await reserveSignIn(email);
    let status = 500;
    try {
      const res = await handlers.POST(forward);
      status = res.status;
      return res;
    } finally {
      await attempt.settle(status);
    }
  } catch (err) {
    const known = classifyError(err);
    if (known instanceof ApiError) return errorResponse(known.status, known.code, known.message, known.issues, undefined, known.headers);
    if (known) return errorResponse(500, known.code, known.message);
    getLogger().error({ err }, "unhandled error in auth handler");
    return errorResponse(500, "internal", "something went wrong on our side; it has been logged");
  }
}

/**
 * better-auth answers a database failure inside its own endpoints (a session read) with a bare
 * 500; when PostgreSQL is in fact unreachable, say so as a 503 like every other route.
 */
async function explainOutage(res: Response): Promise<Response> {
  if (res.status < 500) return res;
  try {
    await getDb().execute("select 1");
  } catch (err) {
    const known = classifyError(err);
    if (known instanceof ApiError) return errorResponse(known.status, known.code, known.message);
  }
  return res;
}

export const GET = (req: Request) => handle(req, "GET").then(explainOutage);
export const POST = (req: Request) => handle(req, "POST").then(explainOutage);

import { toNextJsHandler } from "better-auth/next-js";
import { errorResponse } from "../../../../server/api-handler";
import { getAuth } from "../../../../server/auth/better-auth";
import { ApiError, classifyError } from "../../../../server/errors";
import { getLogger } from "../../../../server/log";
import { limitSignIn } from "../../../../server/rate-limit";

/**
 * better-auth's endpoints (/api/auth/sign-up/email, /sign-in/email, /sign-out, /get-session,
 * /organization/*). Sign-in and sign-up are rate limited per client address; errors before
 * better-auth answers use the API's one error shape.
 */
const LIMITED = /\/api\/auth\/sign-(in|up)\//;

async function handle(req: Request, method: "GET" | "POST"): Promise<Response> {
  try {
    if (method === "POST" && LIMITED.test(new URL(req.url).pathname)) await limitSignIn(req);
    const handlers = toNextJsHandler(getAuth());
    return await handlers[method](req);
  } catch (err) {
    const known = classifyError(err);
    if (known instanceof ApiError) return errorResponse(known.status, known.code, known.message, known.issues, undefined, known.headers);
    if (known) return errorResponse(500, known.code, known.message);
    getLogger().error({ err }, "unhandled error in auth handler");
    return errorResponse(500, "internal", "something went wrong on our side; it has been logged");
  }
}

export const GET = (req: Request) => handle(req, "GET");
export const POST = (req: Request) => handle(req, "POST");

import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { apiRateLimit, redisUrl, signInRateLimit } from "@/env";
import type { AuthContext } from "../auth/auth";
import { clientAddress } from "./client-address";
import { ApiError } from "./errors";
import { getLogger } from "./log";
import { getRedis } from "./services";

/**
 * Rate limits shared by every web replica (counters in Redis). When Redis is unreachable each
 * replica falls back to an in-memory limiter of the same size (the library's insurance limiter),
 * so a Redis outage neither blocks sign-in nor lifts the limit.
 */

interface Limiters {
  key: string;
  api: RateLimiterRedis;
  signIn: RateLimiterRedis;
}
const g = globalThis as typeof globalThis & { __volleyLimiters?: Limiters };

function limiters(): Limiters {
  const api = apiRateLimit();
  const signIn = signInRateLimit();
  const key = `${redisUrl()}|${api}|${signIn}`;
  if (g.__volleyLimiters?.key !== key) {
    const storeClient = getRedis();
    const make = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterRedis({ storeClient, keyPrefix, points, duration, insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }) });
    g.__volleyLimiters = { key, api: make("volley:rl:api", api, 60), signIn: make("volley:rl:signin", signIn, 15 * 60) };
  }
  return g.__volleyLimiters;
}

async function consume(limiter: RateLimiterRedis, key: string, what: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(429, "rate_limited", `too many ${what}; try again in ${seconds} s`, undefined, { "retry-after": String(seconds) });
    }
    // Not a limit decision (the insurance limiter should make this unreachable): never fail the request for it.
    getLogger().warn({ err: String(err) }, "rate limiter failed; request allowed");
  }
}

export async function limitApi(auth: AuthContext, req: Request): Promise<void> {
  const { actor } = auth;
  const key = actor.kind === "token" ? `tok:${actor.tokenId}` : actor.kind === "user" ? `usr:${actor.userId}` : `ip:${clientAddress(req)}`;
  await consume(limiters().api, key, "API requests");
}

export async function limitSignIn(req: Request): Promise<void> {
  await consume(limiters().signIn, clientAddress(req), "sign-in attempts");
}

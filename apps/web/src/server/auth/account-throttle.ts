import { createHash } from "node:crypto";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { accountSignInLimit, redisUrl } from "@/env";
import { ApiError } from "../http/errors";
import { getLogger } from "../http/log";
import { getRedis } from "../http/services";

/**
 * Failed sign-ins per account (email), counted in Redis across every address and web replica: the
 * per-address limit alone lets a botnet (or anyone who can vary their address) guess one account's
 * password without end. A point is taken before the attempt (so parallel guesses cannot all slip
 * past a check), given back when better-auth answers anything but "wrong email or password", and the
 * count cleared by a successful sign-in. The price: someone who knows an address can lock its owner
 * out for the window (15 minutes) by failing on purpose.
 */

const WINDOW_SECONDS = 15 * 60;
const g = globalThis as typeof globalThis & { __volleyAccountLimiter?: { key: string; limiter: RateLimiterRedis } };

function limiter(): RateLimiterRedis {
  const points = accountSignInLimit();
  const key = `${redisUrl()}|${points}`;
  if (g.__volleyAccountLimiter?.key !== key) {
    const keyPrefix = "volley:rl:account";
    const insuranceLimiter = new RateLimiterMemory({ keyPrefix, points, duration: WINDOW_SECONDS });
    g.__volleyAccountLimiter = {
      key,
      limiter: new RateLimiterRedis({ storeClient: getRedis(), keyPrefix, points, duration: WINDOW_SECONDS, insuranceLimiter }),
    };
  }
  return g.__volleyAccountLimiter.limiter;
}

/** The account's key: a hash, so Redis holds no email addresses. */
const accountKey = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");

export interface SignInAttempt {
  /** Reports better-auth's answer: 401 keeps the point (a failed guess), 2xx clears the count, anything else gives the point back. */
  settle(status: number): Promise<void>;
}

/** Takes one attempt for `email`, or throws 429 `rate_limited` when the account has had too many failed sign-ins. */
export async function reserveSignIn(email: string): Promise<SignInAttempt> {
  const l = limiter();
  const key = accountKey(email);
  try {
    await l.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(
        429,
        "rate_limited",
        `too many failed sign-ins for this account (limit ${l.points} per 15 minutes); try again in ${seconds} s`,
        undefined,
        { "retry-after": String(seconds) },
      );
    }
    getLogger().warn({ err: String(err) }, "account sign-in limiter failed; attempt allowed");
    return { settle: async () => {} };
  }
  return {
    settle: async (status) => {
      try {
        if (status >= 200 && status < 300) await l.delete(key);
        else if (status !== 401) await l.reward(key, 1);
      } catch (err) {
        getLogger().warn({ err: String(err) }, "account sign-in limiter failed to settle an attempt");
      }
    },
  };
}

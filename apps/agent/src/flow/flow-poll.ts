import { compileJsonPath, compileText, compileValue, type Plan, type TemplateContext } from "@volley/contracts";
import type { PollSource } from "../drivers/driver";
import { asJson } from "./flow-codec";
import { httpBase } from "./http-step";

/**
 * target.polling.poll compiled once per shard; `source(ctx)` is one connection's poll, rendered
 * from its context at every poll. The flow owns templates and captures, the driver the loop, its
 * sockets and the connection's lifetime: a poll connection ends, errs and closes as any other.
 */
export function compilePoll(plan: Plan): ((ctx: TemplateContext) => PollSource) | undefined {
  const poll = plan.target.polling?.poll;
  if (!poll) return undefined;
  const base = httpBase(plan.target.url);
  const url = compileText(poll.url);
  const headers = Object.entries(poll.headers ?? {}).map(([k, v]) => [k.toLowerCase(), compileText(v)] as const);
  const json = poll.json !== undefined ? compileValue(poll.json) : undefined;
  const body = poll.body !== undefined ? compileText(poll.body) : undefined;
  const items = poll.items !== undefined ? compileJsonPath(poll.items) : undefined;
  const captures = Object.entries(poll.capture ?? {}).map(([name, path]) => [name, compileJsonPath(path)] as const);
  return (ctx) => ({
    next() {
      const h: Record<string, string> = {};
      for (const [k, v] of headers) h[k] = v(ctx);
      let payload: string | undefined;
      if (json) {
        payload = JSON.stringify(json(ctx));
        h["content-type"] ??= "application/json";
      } else if (body) payload = body(ctx);
      return { method: poll.method, url: new URL(url(ctx), base).toString(), headers: h, ...(payload !== undefined ? { body: payload } : {}) };
    },
    read(text) {
      // An empty answer (204, or a long poll's deadline) carries no message.
      if (text.trim() === "") return [];
      if (!items && captures.length === 0) return [text];
      const value = asJson(text);
      if (typeof value === "symbol") throw new Error(`the poll answered with something other than JSON: ${text.slice(0, 200)}`);
      const vars = ctx.vars as Record<string, unknown>;
      for (const [name, path] of captures) {
        const v = path(value);
        if (v !== undefined) vars[name] = v;
      }
      if (!items) return [text];
      const list = items(value);
      if (!Array.isArray(list)) throw new Error(`the poll's answer has no array at ${poll.items}: ${text.slice(0, 200)}`);
      return list;
    },
  });
}

import type { HttpRequest, TemplateContext } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import { compileCaptures, compileRequest, httpBase, type CookieJar, type FlowDispatcher } from "../flow/http-step";
import { stepHistogram } from "./user-steps";

/**
 * flow.before and flow.after: HTTP requests a shard makes once, before its first user arrives and
 * after its last one left (Artillery's before/after, k6's setup/teardown, per shard here: a run
 * across N agents makes them N times). Each is timed as `step.<before|after>.<name>`; what they
 * capture is handed to every user of the shard as its first vars.
 */
export class ShardHooks {
  /** What before captured; after reads it too. */
  readonly vars: Record<string, unknown> = {};
  private readonly jar: CookieJar = new Map();

  constructor(
    private readonly plan: {
      target: { url: string; headers?: Record<string, string> };
      flow?: { before?: { request: HttpRequest }[]; after?: { request: HttpRequest }[] };
    },
    private readonly dispatcher: FlowDispatcher,
    private readonly recorder: IntervalRecorder,
    private readonly monoUs: () => number,
  ) {}

  /** Runs the hook's requests in order; rejects naming the first that failed (`flow.before.1 (login): …`). */
  async run(which: "before" | "after"): Promise<void> {
    const steps = this.plan.flow?.[which] ?? [];
    const base = httpBase(this.plan.target.url);
    const ctx: TemplateContext = { connIndex: 0, connRoom: undefined, msgId: "", msgSeq: 0, data: undefined, vars: this.vars };
    for (const [i, { request }] of steps.entries()) {
      const name = request.name ?? `request-${i + 1}`;
      const started = this.monoUs();
      try {
        const res = await compileRequest(request, base, this.dispatcher, this.plan.target.headers).run(ctx, this.jar);
        const missing = compileCaptures(request.capture)(this.vars, { body: res.body, headers: res.headers, jar: this.jar });
        if (missing) throw new Error(`capture ${missing}: not found in the response (HTTP ${res.status}: ${res.body.slice(0, 200)})`);
      } catch (err) {
        throw new Error(`flow.${which}.${i} (${name}): ${err instanceof Error ? err.message : String(err)}`);
      }
      this.recorder.recordMicros(stepHistogram(`${which}.${name}`), this.monoUs() - started);
    }
  }
}

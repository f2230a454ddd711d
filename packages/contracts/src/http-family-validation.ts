import type { z } from "zod";
import type { Flow } from "./flow";
import { flowRows } from "./flow-validation";
import { templateNames, templateStrings } from "./flow-template";
import { parseJsonPath } from "./json-path";
import type { Target } from "./target";

const POLLING = new Set(["long-polling", "short-polling"]);

/**
 * Flows on SSE, polling and HTTP targets: what fits a connection that carries nothing to the server
 * (sends are requests) and, on HTTP, no connection at all (a virtual user). Steps that would do
 * nothing at run time are refused with the step to use instead; then the poll (validatePoll).
 */
export function validateHttpFamily(target: Target, flow: Flow | undefined, ctx: z.RefinementCtx): void {
  validatePoll(target, flow, ctx);
  const protocol = target.protocol;
  if (!flow || !(POLLING.has(protocol) || protocol === "sse" || protocol === "http")) return;
  flow.setup.forEach((step, i) => {
    const issue = (message: string) => ctx.addIssue({ code: "custom", path: ["flow", "setup", i], message });
    if ("send" in step) issue(`on ${protocol} nothing is sent on the connection: use a request step ({ request: { method: POST, url: "/…", json: {…} } })`);
    if (protocol === "http" && "waitFor" in step) issue("an HTTP target pushes nothing to wait for: capture from a request step's response instead");
    if (protocol === "http" && "connect" in step)
      issue("an HTTP flow opens no connection (each connection is a virtual user): put headers on the requests, or in target.headers");
  });
}

/**
 * target.polling.poll and the flow belong together: a flow on a polling target polls the
 * application's own route (the reference routes know nothing of its messages), and a poll request
 * has nothing to render or deliver to without a flow. Its templates may use the captures made
 * before the connection opens and its own captures, never msg.* (a poll answers no one message).
 */
export function validatePoll(target: Target, flow: Flow | undefined, ctx: z.RefinementCtx): void {
  const poll = target.polling?.poll;
  const at = ["target", "polling", "poll"];
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path: [...at, ...path], message });
  if (!poll) {
    if (flow && POLLING.has(target.protocol)) {
      issue(
        [],
        `a flow on ${target.protocol} polls the application's own route: add target.polling.poll: { url: "/poll?session={{ vars.session }}", items: "$.messages" }`,
      );
    }
    return;
  }
  if (!flow) {
    issue(
      [],
      "a poll request belongs to a flow (it delivers the flow's messages): add flow: { messages: [...] }, or remove poll to use Volley's reference polling routes",
    );
    return;
  }
  const made = capturedBeforeConnect(flow);
  for (const name of Object.keys(poll.capture ?? {})) made.add(name);
  const columns = new Set(safeRows(flow).flatMap((r) => Object.keys(r)));
  const fields = { url: poll.url, headers: poll.headers, json: poll.json, body: poll.body };
  for (const s of templateStrings(fields)) {
    const { names, problems } = templateNames(s.text);
    for (const p of problems) issue(s.path, p);
    for (const n of names) {
      if (n.startsWith("msg.")) issue(s.path, `{{ ${n} }} only exists in flow.messages: a poll belongs to no message (use conn.index or a capture)`);
      if (n.startsWith("vars.") && !made.has(n.slice(5).split(".")[0]!)) {
        issue(
          s.path,
          `{{ ${n} }} is not captured before the connection opens: capture it in a setup request before the connect (capture: { ${n.slice(5)}: "$.…" }) or in poll.capture`,
        );
      }
      if (n.startsWith("data.") && !columns.has(n.slice(5))) issue(s.path, `{{ ${n} }} needs a flow.data column "${n.slice(5)}": add it to the rows`);
    }
  }
  if (poll.items !== undefined) checkPath(poll.items, ["items"], issue);
  for (const [name, path] of Object.entries(poll.capture ?? {})) checkPath(path, ["capture", name], issue);
}

/**
 * Captures made by the steps that run before the connect (an explicit one, else the first send or
 * waitFor): flow.setup's, or a user's leading flow.steps.
 */
function capturedBeforeConnect(flow: Flow): Set<string> {
  const made = new Set<string>();
  const steps: readonly object[] = flow.steps ?? flow.setup;
  const explicit = steps.findIndex((s) => "connect" in s);
  const firstOnConnection = steps.findIndex((s) => "send" in s || "waitFor" in s);
  const end = explicit >= 0 ? explicit : firstOnConnection >= 0 ? firstOnConnection : steps.length;
  for (const step of steps.slice(0, end))
    if ("request" in step) for (const k of Object.keys((step as { request: { capture?: object } }).request.capture ?? {})) made.add(k);
  return made;
}

function safeRows(flow: Flow): Record<string, unknown>[] {
  try {
    return flowRows(flow.data);
  } catch {
    return []; // validateFlow reports the unreadable CSV
  }
}

function checkPath(path: string, at: (string | number)[], issue: (path: (string | number)[], message: string) => void): void {
  const parsed = parseJsonPath(path);
  if (!parsed.ok) issue(at, parsed.message);
}

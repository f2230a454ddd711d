import type { z } from "zod";

/**
 * What each required field of a plan is for, with an example to copy, by its path in the plan.
 * zod's own words for a field left out ("Invalid input: expected object, received undefined")
 * say neither what belongs there nor how to write it.
 */
const REQUIRED_IN_PLAN: Record<string, string> = {
  // The plan itself, as an API body's `plan`.
  "": "the test plan, like plan: { name: smoke, target: { url: ws://127.0.0.1:9001/echo }, connections: { count: 50 }, scenario: { kind: echo, message: { rate: 10 }, duration: 30s } }",
  name: 'a name for the plan, like name: "ws echo — 50 connections"',
  target: "the server to load, like target: { url: ws://127.0.0.1:9001/echo } (protocol: ws unless you say otherwise)",
  connections: "how many connections to open, like connections: { count: 50 } (opened 100 a second unless rate says otherwise)",
  "connections.count": "how many connections to open, like count: 50",
  scenario: "what the connections do, like scenario: { kind: echo, message: { rate: 10 }, duration: 30s }",
  "scenario.kind": "what the connections do, like kind: echo",
  "scenario.message":
    "the messages each connection sends, like message: { rate: 10 } (10 a second per connection; bytes, per, arrival and timeout have defaults)",
  "scenario.message.rate": "messages per second (per connection, or in all with per: aggregate), like rate: 10",
  "scenario.duration": "how long each connection sends, like duration: 30s",
  "scenario.arrivalRate": "users arriving per second, like arrivalRate: 5",
  "sweep.step": "how much each step adds to the message rate, like step: 100",
};

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/**
 * A zod error map (`schema.safeParse(input, { error: requiredFieldError })`) that words a missing
 * field as "required: …": for a plan's required fields what belongs there and an example, for any
 * other the type it takes (a left-out discriminator such as scenario.kind: the values it takes).
 * The plan may sit at the input's root or under `plan` (API bodies).
 * Every other issue keeps the schema's own message.
 */
export const requiredFieldError: z.core.$ZodErrorMap = (issue) => {
  const path = (issue.path ?? []).map(String);
  const inPlan = (path[0] === "plan" ? path.slice(1) : path).join(".");
  if (issue.code === "invalid_type" && issue.input === undefined) return `required: ${REQUIRED_IN_PLAN[inPlan] ?? article(issue.expected)}`;
  // A discriminated union (scenario.kind) whose discriminator was left out, not misspelled.
  const { discriminator, options, input } = issue as { discriminator?: string; options?: unknown[]; input?: unknown };
  if (issue.code !== "invalid_union" || !discriminator || !options || typeof input !== "object" || input === null) return undefined;
  if ((input as Record<string, unknown>)[discriminator] !== undefined) return undefined;
  const oneOf = options.length === 1 ? String(options[0]) : `one of ${options.slice(0, -1).join(", ")} or ${options.at(-1)}`;
  return `required: ${REQUIRED_IN_PLAN[inPlan] ? `${REQUIRED_IN_PLAN[inPlan]} (${oneOf})` : oneOf}`;
};

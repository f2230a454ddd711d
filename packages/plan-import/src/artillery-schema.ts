import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { PlanImportError } from "./import-error";

/**
 * The parts of an Artillery script (https://www.artillery.io/docs/reference/test-script) that a
 * WebSocket or Socket.IO load test uses. Unknown fields are kept and reported, never fatal.
 */
const num = z.union([
  z.number(),
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number),
]);

export const phaseSchema = z.looseObject({
  name: z.string().optional(),
  duration: num.optional(),
  arrivalRate: num.optional(),
  rampTo: num.optional(),
  arrivalCount: num.optional(),
  maxVusers: num.optional(),
  pause: num.optional(),
});
export type Phase = z.output<typeof phaseSchema>;

const captureOne = z.looseObject({ json: z.string().optional(), header: z.string().optional(), regexp: z.string().optional(), as: z.string() });
export const captureSchema = z.union([captureOne, z.array(captureOne)]);
export type ArtilleryCapture = z.output<typeof captureSchema>;

const matchSchema = z.union([z.looseObject({ json: z.string(), value: z.unknown() }), z.array(z.looseObject({ json: z.string(), value: z.unknown() }))]);

export const responseSchema = z.looseObject({
  channel: z.string().optional(),
  data: z.unknown().optional(),
  capture: captureSchema.optional(),
  match: matchSchema.optional(),
});
export type ArtilleryResponse = z.output<typeof responseSchema>;

export const payloadSchema = z.looseObject({
  path: z.string(),
  fields: z.array(z.string()).optional(),
  order: z.string().optional(),
  skipHeader: z.boolean().optional(),
  delimiter: z.string().optional(),
  name: z.string().optional(),
  loadAll: z.boolean().optional(),
});
export type Payload = z.output<typeof payloadSchema>;

/** A flow step: one key naming the action (emit, send, think, loop, get, post, function…). */
export type Step = Record<string, unknown>;

export const scriptSchema = z.object(
  {
    config: z.looseObject(
      {
        target: z.string({ error: "config.target is missing: the server's URL, like ws://localhost:8080 or http://localhost:3000" }),
        phases: z.array(phaseSchema).optional(),
        payload: z.union([payloadSchema, z.array(payloadSchema)]).optional(),
        variables: z.record(z.string(), z.unknown()).optional(),
        engines: z.record(z.string(), z.unknown()).optional(),
        ws: z.record(z.string(), z.unknown()).optional(),
        socketio: z.record(z.string(), z.unknown()).optional(),
      },
      { error: "config is missing: an Artillery script starts with config: { target, phases }" },
    ),
    scenarios: z
      .array(
        z.looseObject({
          name: z.string().optional(),
          engine: z.string().optional(),
          weight: z.number().optional(),
          flow: z.array(z.record(z.string(), z.unknown()), { error: "each scenario needs flow: [steps]" }),
        }),
        {
          error: "scenarios is missing: a list with at least one { engine: ws | socketio, flow: [...] }",
        },
      )
      .min(1, "scenarios is empty: add one { engine: ws | socketio, flow: [...] }"),
    /** Run once per test, before the virtual users and after them. */
    before: z.looseObject({ flow: z.array(z.record(z.string(), z.unknown())) }).optional(),
    after: z.looseObject({ flow: z.array(z.record(z.string(), z.unknown())) }).optional(),
  },
  { error: "not an Artillery script: expected a YAML mapping with config and scenarios" },
);
export type Script = z.output<typeof scriptSchema>;

export function parseArtillery(yamlText: string): Script {
  let doc: unknown;
  try {
    doc = parseYaml(yamlText);
  } catch (err) {
    throw new PlanImportError(`not an Artillery script: not valid YAML (${(err as Error).message})`);
  }
  const result = scriptSchema.safeParse(doc);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const at = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new PlanImportError(
      issue.message.startsWith("not an") || issue.message.includes(" is missing") ? issue.message : `not an Artillery script: ${at}${issue.message}`,
    );
  }
  return result.data;
}

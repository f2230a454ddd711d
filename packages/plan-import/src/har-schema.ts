import { z } from "zod";
import { PlanImportError } from "./import-error";

/**
 * The parts of a HAR 1.2 file the import reads, as Chromium DevTools ("Save all as HAR with
 * content") and Playwright write them; anything else in the file is ignored.
 */
const nameValue = z.object({ name: z.string(), value: z.string() });

export const wsMessageSchema = z.object({
  type: z.enum(["send", "receive"]),
  /** DevTools: epoch seconds; only the order is used. */
  time: z.number(),
  /** 1 text, 2 binary (base64 data). */
  opcode: z.number(),
  data: z.string(),
});

export const harEntrySchema = z.object({
  startedDateTime: z.string().optional(),
  _resourceType: z.string().optional(),
  request: z.object({
    method: z.string(),
    url: z.string(),
    headers: z.array(nameValue).default([]),
    postData: z.object({ mimeType: z.string().optional(), text: z.string().optional() }).optional(),
  }),
  response: z
    .object({
      status: z.number(),
      headers: z.array(nameValue).default([]),
      content: z.object({ mimeType: z.string().optional(), text: z.string().optional(), encoding: z.string().optional() }).optional(),
    })
    .optional(),
  _webSocketMessages: z.array(wsMessageSchema).optional(),
});
export type HarEntry = z.output<typeof harEntrySchema>;

const harSchema = z.object({
  log: z.object({ entries: z.array(harEntrySchema) }, { error: "not a HAR: log is missing (a HAR file is { log: { entries: [...] } })" }),
});

/** The HAR's entries, or an error naming the first thing that makes it no HAR. */
export function parseHar(input: unknown): HarEntry[] {
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch (err) {
      throw new PlanImportError(`not a HAR: the file is not JSON (${(err as Error).message})`);
    }
  }
  const log = (input as { log?: { entries?: unknown } } | null)?.log;
  if (typeof input !== "object" || input === null || typeof log !== "object" || log === null)
    throw new PlanImportError("not a HAR: log is missing (a HAR file is { log: { entries: [...] } })");
  if (!Array.isArray(log.entries)) throw new PlanImportError("not a HAR: log.entries missing (a HAR file is { log: { entries: [...] } })");
  const result = harSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new PlanImportError(`not a HAR: ${issue.path.join(".")}: ${issue.message}`);
  }
  return result.data.log.entries;
}

/** A response body as text (base64 decoded), or undefined. */
export function responseText(entry: HarEntry): string | undefined {
  const content = entry.response?.content;
  if (content?.text === undefined) return undefined;
  return content.encoding === "base64" ? Buffer.from(content.text, "base64").toString("utf8") : content.text;
}

export const isWebSocketEntry = (e: HarEntry): boolean =>
  e._resourceType === "websocket" || e._webSocketMessages !== undefined || /^wss?:/i.test(e.request.url);

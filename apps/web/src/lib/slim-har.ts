/**
 * A HAR saved from DevTools "with content" carries every script, stylesheet, image and font the
 * page loaded, often many megabytes, far past the API's body limit (VOLLEY_MAX_BODY_BYTES, 1 MiB by
 * default). The import reads only the fields of packages/plan-import/src/har-schema.ts, and of
 * response bodies only JSON or plain text (log-in answers, Socket.IO polling). So the browser keeps
 * just those before sending: the plan comes out the same, the upload shrinks to the session itself.
 * Text that is not a HAR is returned unchanged, for the server to say what is wrong with it.
 */
export function slimHar(text: string): string {
  let har: unknown;
  try {
    har = JSON.parse(text);
  } catch {
    return text;
  }
  const entries = (har as { log?: { entries?: unknown } } | null)?.log?.entries;
  if (!Array.isArray(entries)) return text;
  return JSON.stringify({ log: { entries: entries.map(slimEntry) } });
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const TEXTUAL = /json|text\/plain/i;

/** Only the keys `keys` of `v`, those present; `v` itself when it is no object (the server names it). */
function pick(v: unknown, keys: readonly string[]): unknown {
  if (!isObj(v)) return v;
  return Object.fromEntries(keys.filter((k) => v[k] !== undefined).map((k) => [k, v[k]]));
}

function slimEntry(entry: unknown): unknown {
  if (!isObj(entry)) return entry;
  const out = pick(entry, ["startedDateTime", "_resourceType", "_webSocketMessages"]) as Obj;
  if (isObj(entry.request)) {
    const request = pick(entry.request, ["method", "url", "headers"]) as Obj;
    if (entry.request.postData !== undefined) request.postData = pick(entry.request.postData, ["mimeType", "text"]);
    out.request = request;
  } else out.request = entry.request;
  if (isObj(entry.response)) {
    const response = pick(entry.response, ["status", "headers"]) as Obj;
    const content = entry.response.content;
    if (isObj(content)) {
      const mime = typeof content.mimeType === "string" ? content.mimeType : "";
      response.content = pick(content, mime === "" || TEXTUAL.test(mime) ? ["mimeType", "text", "encoding"] : ["mimeType"]);
    } else if (content !== undefined) response.content = content;
    out.response = response;
  } else if (entry.response !== undefined) out.response = entry.response;
  return out;
}

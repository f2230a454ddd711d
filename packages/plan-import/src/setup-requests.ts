import { type HarEntry, responseText } from "./har-schema";
import { jsonPath, leaves, mapStrings, safeName } from "./json-leaves";
import type { SetupInput } from "./message-shapes";

type RequestStep = Extract<SetupInput, { request: unknown }>["request"];

interface Candidate {
  entry: HarEntry;
  step: RequestStep;
  /** Values of its response that later messages may carry: value → capture name and path. */
  values: { value: string; name: string; path: string }[];
  /** Cookies it set (Set-Cookie names). */
  cookies: string[];
  used: boolean;
  /** On another origin than the socket: its URL stays absolute. */
  elsewhere: boolean;
  /** The capture names a later value used. */
  captured: Set<string>;
}

const SESSION_PATH = /log-?in|sign-?in|session|auth|token|register|connect/i;

/**
 * The HTTP calls before the WebSocket that look like logging in or making a session (POST/PUT
 * with JSON): they become setup requests when a later header, handshake or message carries a value
 * of their response (the value becomes `{{ vars.<name> }}`, captured from the response) or when
 * they set a cookie the handshake sends. One on the socket's own host keeps a relative URL (it
 * follows the target when the plan is pointed elsewhere); one on another origin (a login or
 * single sign-on service) keeps its absolute URL, moved by `origins` when the caller maps it.
 */
export class SessionRequests {
  private readonly candidates: Candidate[] = [];
  private readonly taken = new Set<string>();

  constructor(
    entries: HarEntry[],
    before: number,
    socketHost: string,
    private readonly notes: string[],
    private readonly origins: Record<string, string> = {},
  ) {
    for (const entry of entries.slice(0, before)) {
      const url = URL.canParse(entry.request.url) ? new URL(entry.request.url) : undefined;
      if (!url || !/^https?:$/.test(url.protocol) || url.pathname.includes("/socket.io")) continue;
      const elsewhere = url.host !== socketHost;
      const method = entry.request.method.toUpperCase();
      if (!["POST", "PUT", "PATCH"].includes(method) && !(method === "GET" && SESSION_PATH.test(url.pathname))) continue;
      const bodyText = entry.request.postData?.text;
      let json: unknown;
      try {
        json = bodyText === undefined || bodyText === "" ? undefined : JSON.parse(bodyText);
      } catch {
        if (method !== "GET") continue;
      }
      if (method !== "GET" && json === undefined) continue;
      const keep = ["authorization", "x-csrf-token", "x-xsrf-token"];
      const headers = Object.fromEntries(
        entry.request.headers.filter((h) => keep.includes(h.name.toLowerCase()) || /^x-(?!forwarded)/i.test(h.name)).map((h) => [h.name, h.value]),
      );
      const step: RequestStep = {
        name: safeName(url.pathname.split("/").filter(Boolean).pop() ?? "request", "request"),
        method: method as RequestStep["method"] & string,
        url: elsewhere ? `${this.origin(url.origin)}${url.pathname}${url.search}` : `${url.pathname}${url.search}`,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(json !== undefined ? { json: json as never } : {}),
      };
      let response: unknown;
      try {
        response = JSON.parse(responseText(entry) ?? "");
      } catch {
        response = undefined;
      }
      const values = leaves(response)
        .filter((l) => typeof l.value === "string" && l.value.length >= 6)
        .map((l) => ({ value: l.value as string, name: this.name(String(l.path[l.path.length - 1] ?? "value")), path: jsonPath(l.path) }));
      const cookies = (entry.response?.headers ?? [])
        .filter((h) => h.name.toLowerCase() === "set-cookie")
        .flatMap((h) => h.value.split("\n"))
        .map((c) => c.split("=")[0]!.trim());
      this.candidates.push({ entry, step, values, cookies, used: false, elsewhere, captured: new Set() });
    }
  }

  /** The recorded origin, or what the caller maps it to. */
  private origin(recorded: string): string {
    const mapped = this.origins[recorded];
    return mapped === undefined ? recorded : new URL(mapped).origin;
  }

  private name(raw: string): string {
    const base = safeName(raw, "value").replace(/^[^A-Za-z_]/, "_");
    let n = base;
    for (let k = 2; this.taken.has(n); k++) n = `${base}${k}`;
    this.taken.add(n);
    return n;
  }

  /** Replaces every recorded response value in `value` with its capture, marking the request used. */
  substitute<T>(value: T): T {
    return mapStrings(value, (s) => {
      let out = s;
      for (const c of this.candidates) {
        for (const v of c.values) {
          if (!out.includes(v.value)) continue;
          out = out.split(v.value).join(`{{ vars.${v.name} }}`);
          c.used = true;
          c.captured.add(v.name);
        }
      }
      return out;
    });
  }

  /** Marks the request that set this cookie as used; true when one did (the agent's cookie jar then sends it). */
  setsCookie(name: string): boolean {
    const c = this.candidates.find((x) => x.cookies.includes(name));
    if (c) c.used = true;
    return c !== undefined;
  }

  /** The request steps to keep, in recorded order, with the captures their values need. */
  steps(): SetupInput[] {
    const out: SetupInput[] = [];
    for (const c of this.candidates) {
      if (!c.used) {
        this.notes.push(`${c.step.method} ${c.step.url} was left out: nothing later uses its response (add it to flow.setup if the server needs it)`);
        continue;
      }
      const capture = Object.fromEntries(c.values.filter((v) => c.captured.has(v.name)).map((v) => [v.name, v.path]));
      out.push({ request: { ...c.step, ...(Object.keys(capture).length > 0 ? { capture } : {}) } });
      const recorded = new URL(c.entry.request.url).origin;
      if (c.elsewhere)
        this.notes.push(
          `${c.step.name}: ${c.step.method} ${c.step.url} is on another origin than the socket, so every connection calls it there first (what it captures is its own)${
            this.origins[recorded] === undefined
              ? `; pointing the plan at another server does not move it: import with --origin ${recorded}=<its origin there> (CLI) or edit flow.setup`
              : ` (recorded on ${recorded})`
          }`,
        );
      if (c.step.json !== undefined)
        this.notes.push(
          `${c.step.name}: every connection sends the recorded body ${JSON.stringify(c.step.json)}; give each its own user with flow.data (rows or csv) and "{{ data.<column> }}"`,
        );
    }
    return out;
  }

  /** A header of the handshake worth keeping (credentials and the app's own x- headers). */
  static keepHeader(name: string): boolean {
    const n = name.toLowerCase();
    return n === "authorization" || (n.startsWith("x-") && !n.startsWith("x-forwarded")) || n === "cookie";
  }
}

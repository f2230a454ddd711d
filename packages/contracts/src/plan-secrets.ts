import { isAlias, isScalar, parse as parseYaml, parseDocument, type Node } from "yaml";

/**
 * Which values of a plan are credentials for the target: the one list that sealing at rest
 * (packages/db plan-secrets-box), redaction for viewers and read tokens, and the editor's
 * "keep the stored secret" rule all walk, so they agree on every field.
 *
 * - header values whose name looks like a credential (Authorization, Cookie, X-Api-Key, …token…),
 *   on the target, the poll request, setup/user/before/after request and connect steps, STOMP send headers and
 *   message requests;
 * - target.stomp.passcode and target.mqtt.password;
 * - every string inside a Socket.IO connect `auth` payload;
 * - in URLs (a user's connect `url` too), the password of `user:pass@` and query values whose name
 *   looks like a credential (kind "url": only those parts are secret), and connect `query` values
 *   of such names;
 * - in JSON bodies (request, poll, send and message `json`/`args`), strings under keys like
 *   password, secret, token, apiKey; in data rows, columns of such names;
 * - whole text bodies that carry such a field (`password=…`, `"token": …`) and CSV data whose header
 *   names such a column.
 *
 * A value that is only a template (`Bearer {{ vars.token }}`) holds no secret of its own and is left
 * alone. Numbers and booleans are never treated as secrets.
 */

/** What viewers and read-scoped tokens see in place of a secret (and what a save may send back to keep it). */
export const SECRET_MARKER = "••••••";

export type SecretPath = (string | number)[];
export interface PlanSecret {
  path: SecretPath;
  /** value: the whole string is secret; url: only its password and credential query values are. */
  kind: "value" | "url";
}

const SECRET_NAME =
  /pass(word|wd|code|phrase)?$|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential|session|cookie|auth(?!or)|signature|^sig$|^pin$|^otp$/i;
/** Header names: the same, plus the credential headers of HTTP itself. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key)$/i;
const SECRET_FIELD_IN_TEXT = /(pass(word|wd)?|secret|token|api[-_]?key|credential)["']?\s*[=:]/i;

export const isSecretName = (name: string) => SECRET_NAME.test(name);
const isSecretHeader = (name: string) => SECRET_HEADER.test(name) || SECRET_NAME.test(name);

/** A value with text of its own: not empty and not just templates (with at most an auth scheme word). */
function holdsSecret(value: unknown): value is string {
  if (typeof value !== "string" || value.trim() === "") return false;
  if (!value.includes("{{")) return true;
  return !/^\s*(bearer|basic|token)?\s*$/i.test(value.replace(/\{\{[^}]*\}\}/g, ""));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The credential parts of a URL: its userinfo password and credential-named query values (templates excepted). */
function urlSecretParts(url: string, replace: (part: string) => string): string {
  const [beforeHash, ...hash] = url.split("#");
  const [base, ...queryParts] = beforeHash!.split("?");
  const withUser = base!.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*?):([^/@]*)@/i, (all, scheme: string, user: string, pass: string) =>
    holdsSecret(pass) ? `${scheme}${user}:${replace(pass)}@` : all,
  );
  const query = queryParts.join("?");
  const newQuery = query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {}
      const value = pair.slice(eq + 1);
      return isSecretName(name) && holdsSecret(value) ? `${pair.slice(0, eq)}=${replace(value)}` : pair;
    })
    .join("&");
  return withUser + (queryParts.length ? `?${newQuery}` : "") + (hash.length ? `#${hash.join("#")}` : "");
}

/** The URL with its credential parts as SECRET_MARKER (the rest as written). */
const redactUrl = (url: string) => urlSecretParts(url, () => SECRET_MARKER);
function urlHoldsSecret(url: unknown): url is string {
  let found = false;
  if (typeof url === "string")
    urlSecretParts(url, (part) => {
      found = true;
      return part;
    });
  return found;
}

/** What a secret of this kind reads as, redacted. */
export function redactSecretValue(kind: PlanSecret["kind"], value: string): string {
  return kind === "url" ? redactUrl(value) : SECRET_MARKER;
}

/** Every secret of a plan (validated or as written: the walk reads plain JSON), in document order. */
export function planSecrets(plan: unknown): PlanSecret[] {
  const out: PlanSecret[] = [];
  const value = (v: unknown, path: SecretPath) => {
    if (holdsSecret(v)) out.push({ path, kind: "value" });
  };
  const url = (v: unknown, path: SecretPath) => {
    if (urlHoldsSecret(v)) out.push({ path, kind: "url" });
  };
  const headers = (h: unknown, path: SecretPath) => {
    if (isObject(h)) for (const [k, v] of Object.entries(h)) if (isSecretHeader(k)) value(v, [...path, k]);
  };
  const named = (rec: unknown, path: SecretPath) => {
    if (isObject(rec)) for (const [k, v] of Object.entries(rec)) if (isSecretName(k)) value(v, [...path, k]);
  };
  /** JSON bodies: strings under credential keys, or every string when `all` (an auth payload). */
  const json = (v: unknown, path: SecretPath, all = false) => {
    if (typeof v === "string") {
      if (all) value(v, path);
    } else if (Array.isArray(v)) for (const [i, x] of v.entries()) json(x, [...path, i], all);
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) json(x, [...path, k], all || isSecretName(k));
  };
  const text = (v: unknown, path: SecretPath) => {
    if (typeof v === "string" && SECRET_FIELD_IN_TEXT.test(v)) value(v, path);
  };
  const request = (r: unknown, path: SecretPath) => {
    if (!isObject(r)) return;
    url(r.url, [...path, "url"]);
    headers(r.headers, [...path, "headers"]);
    json(r.json, [...path, "json"]);
    text(r.body, [...path, "body"]);
  };
  const outgoing = (m: Record<string, unknown>, path: SecretPath) => {
    headers(m.headers, [...path, "headers"]);
    json(m.json, [...path, "json"]);
    json(m.args, [...path, "args"]);
  };
  const connect = (c: unknown, path: SecretPath) => {
    if (!isObject(c)) return;
    // A user's connection of its own may carry credentials in its URL, as a request's may.
    url(c.url, [...path, "url"]);
    headers(c.headers, [...path, "headers"]);
    named(c.query, [...path, "query"]);
    json(c.auth, [...path, "auth"], true);
  };
  const steps = (list: unknown, path: SecretPath) => {
    if (!Array.isArray(list)) return;
    list.forEach((step, i) => {
      if (!isObject(step)) return;
      const at = [...path, i];
      if (isObject(step.request)) request(step.request, [...at, "request"]);
      if (isObject(step.connect)) connect(step.connect, [...at, "connect"]);
      if (isObject(step.send)) outgoing(step.send, [...at, "send"]);
      if (isObject(step.loop)) steps(step.loop.steps, [...at, "loop", "steps"]);
      if (Array.isArray(step.choice)) for (const [j, b] of step.choice.entries()) if (isObject(b)) steps(b.steps, [...at, "choice", j, "steps"]);
      if ("if" in step) {
        steps(step.steps, [...at, "steps"]);
        steps(step.else, [...at, "else"]);
      }
    });
  };

  if (!isObject(plan)) return out;
  const target = plan.target;
  if (isObject(target)) {
    url(target.url, ["target", "url"]);
    headers(target.headers, ["target", "headers"]);
    if (isObject(target.stomp)) value(target.stomp.passcode, ["target", "stomp", "passcode"]);
    if (isObject(target.mqtt)) value(target.mqtt.password, ["target", "mqtt", "password"]);
    if (isObject(target.http)) text(target.http.body, ["target", "http", "body"]);
    if (isObject(target.polling)) request(target.polling.poll, ["target", "polling", "poll"]);
  }
  const flow = plan.flow;
  if (isObject(flow)) {
    if (isObject(flow.data)) {
      if (Array.isArray(flow.data.rows)) for (const [i, row] of flow.data.rows.entries()) named(row, ["flow", "data", "rows", i]);
      const csv = flow.data.csv;
      if (
        typeof csv === "string" &&
        csv
          .split(/\r?\n/, 1)[0]!
          .split(/[,;\t]/)
          .some((c) => isSecretName(c.trim().replace(/^"|"$/g, "")))
      )
        value(csv, ["flow", "data", "csv"]);
    }
    steps(flow.setup, ["flow", "setup"]);
    steps(flow.steps, ["flow", "steps"]);
    steps(flow.before, ["flow", "before"]);
    steps(flow.after, ["flow", "after"]);
    if (Array.isArray(flow.messages))
      flow.messages.forEach((m, i) => {
        if (!isObject(m)) return;
        outgoing(m, ["flow", "messages", i]);
        request(m.request, ["flow", "messages", i, "request"]);
      });
  }
  return out;
}

export function getAtPath(doc: unknown, path: SecretPath): unknown {
  let at: unknown = doc;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/** Sets a value at a path that exists (the walk found it); a copy is the caller's business. */
export function setAtPath(doc: unknown, path: SecretPath, value: unknown): void {
  const parent = getAtPath(doc, path.slice(0, -1));
  if (typeof parent === "object" && parent !== null) (parent as Record<string | number, unknown>)[path.at(-1)!] = value;
}

export const secretPathName = (path: SecretPath) => path.join(".");

/** A deep copy of the plan with every secret as SECRET_MARKER (URLs: only their credential parts). */
export function redactPlan<T>(plan: T): T {
  const copy = structuredClone(plan);
  for (const s of planSecrets(plan)) setAtPath(copy, s.path, redactSecretValue(s.kind, getAtPath(plan, s.path) as string));
  return copy;
}

/**
 * A save that sends a secret back as it was shown redacted keeps the stored value: each secret of
 * `incoming` that equals the redaction of the stored plan's value at the same path takes the stored
 * value. `unresolved` names the secrets that still hold the marker with nothing stored there (the
 * editor moved or added them): the save must refuse those rather than store the marker.
 */
export function keepRedactedSecrets<T>(incoming: T, stored: unknown): { plan: T; kept: SecretPath[]; unresolved: string[] } {
  const plan = structuredClone(incoming);
  const kept: SecretPath[] = [];
  const unresolved: string[] = [];
  for (const s of planSecrets(incoming)) {
    const now = getAtPath(incoming, s.path) as string;
    if (!now.includes(SECRET_MARKER)) continue;
    const before = getAtPath(stored, s.path);
    if (typeof before === "string" && redactSecretValue(s.kind, before) === now) {
      setAtPath(plan, s.path, before);
      kept.push(s.path);
    } else unresolved.push(secretPathName(s.path));
  }
  return { plan, kept, unresolved };
}

/**
 * Replaces the scalars at `paths` in YAML text, everything else byte for byte (comments, layout,
 * quoting): `replace` gets each scalar's text as written and its path, and returns the new text.
 * Aliases are followed to their anchor, whose scalar is replaced once. Null when a path does not
 * lead to a scalar of the text (a plan whose text cannot be edited this way).
 */
export function replaceYamlScalars(source: string, paths: SecretPath[], replace: (raw: string, path: SecretPath) => string): string | null {
  const doc = parseDocument(source);
  if (doc.errors.length > 0) return null;
  const spans = new Map<number, { start: number; end: number; path: SecretPath }>();
  for (const path of paths) {
    let node = doc.getIn(path, true) as Node | undefined;
    if (isAlias(node)) node = node.resolve(doc) as Node | undefined;
    if (!isScalar(node) || !node.range) return null;
    const [start, end] = node.range;
    if (!spans.has(start)) spans.set(start, { start, end, path });
  }
  // Pieces joined once (a plan's data rows can hold thousands of secrets).
  const pieces: string[] = [];
  let at = 0;
  for (const { start, end, path } of [...spans.values()].sort((a, b) => a.start - b.start)) {
    const raw = source.slice(start, end);
    // A block scalar's span ends with its line break; the replacement keeps it.
    const trail = /\s*$/.exec(raw)![0];
    pieces.push(source.slice(at, start), replace(raw.slice(0, raw.length - trail.length), path), trail);
    at = end;
  }
  pieces.push(source.slice(at));
  return pieces.join("");
}

/**
 * The YAML text with each secret as its redaction (a double-quoted scalar), and the text each
 * secret had as written, to put back for readers who may see it. Null when the text cannot be
 * redacted in place (a path it does not hold, or a value it still shows): the caller keeps no text.
 */
export function redactYamlSource(source: string, plan: unknown): { text: string; originals: [SecretPath, string][] } | null {
  const secrets = planSecrets(plan);
  if (secrets.length === 0) return { text: source, originals: [] };
  const originals: [SecretPath, string][] = [];
  const kinds = new Map(secrets.map((s) => [secretPathName(s.path), s.kind]));
  const text = replaceYamlScalars(
    source,
    secrets.map((s) => s.path),
    (raw, path) => {
      originals.push([path, raw]);
      return JSON.stringify(redactSecretValue(kinds.get(secretPathName(path))!, getAtPath(plan, path) as string));
    },
  );
  if (text === null) return null;
  // Proof by reading it back: every secret reads as its redaction, so the text holds none of them.
  const back = parseYaml(text) as unknown;
  for (const s of secrets) if (getAtPath(back, s.path) !== redactSecretValue(s.kind, getAtPath(plan, s.path) as string)) return null;
  return { text, originals };
}

/** The redacted text (from redactYamlSource) with each secret's original text put back: the author's text exactly. */
export function restoreYamlSource(text: string, originals: [SecretPath, string][]): string | null {
  if (originals.length === 0) return text;
  const byPath = new Map(originals.map(([p, raw]) => [secretPathName(p), raw]));
  return replaceYamlScalars(
    text,
    originals.map(([p]) => p),
    (raw, path) => byPath.get(secretPathName(path)) ?? raw,
  );
}

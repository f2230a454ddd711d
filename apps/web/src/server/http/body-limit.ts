import { ApiError } from "./errors";

/** Sign-in, sign-up and the other auth routes take an email, a password and a name: 16 KiB is plenty. */
export const AUTH_BODY_LIMIT = 16 * 1024;

function tooLarge(limit: number, what: string, size?: number): ApiError {
  const seen = size === undefined ? `is larger than ${limit} bytes` : `is ${size} bytes`;
  return new ApiError(413, "payload_too_large", `the request body ${seen}; the limit is ${limit} bytes for ${what} — send a smaller body`);
}

/**
 * Reads a request body, never holding more than `limit` bytes: a declared Content-Length over the
 * limit is refused before reading, and a chunked (or lying) body is counted as it streams and
 * abandoned the moment it passes the limit. Without this, `req.text()` buffers whatever arrives (a
 * 600 MB post took web to gigabytes and ended in a 500). Throws 413 `payload_too_large` naming the limit.
 */
export async function readBodyBytes(req: Request, limit: number, what: string): Promise<Uint8Array<ArrayBuffer>> {
  const declared = req.headers.get("content-length")?.trim();
  if (declared && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, what, Number(declared));
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Stops reading here: the rest of the upload is never buffered.
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, what);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return all;
}

/** readBodyBytes decoded as UTF-8. */
export async function readBodyText(req: Request, limit: number, what: string): Promise<string> {
  return new TextDecoder().decode(await readBodyBytes(req, limit, what));
}

import { receivedApiErrorSchema, type FieldIssue } from "@volley/contracts";

/** An API error response, as the browser sees it. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
  }
}

/** fetch + JSON + the one error shape; network failures become an ApiRequestError with status 0. */
export async function apiFetch<T>(path: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      cache: "no-store",
      ...init,
      headers: { accept: "application/json", ...(init?.body ? { "content-type": "application/json" } : {}), ...init?.headers },
    });
  } catch (err) {
    throw new ApiRequestError(0, "network", `cannot reach the Volley server (${err instanceof Error ? err.message : String(err)})`);
  }
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: handled below */
  }
  if (!res.ok) {
    const parsed = receivedApiErrorSchema.safeParse(data);
    if (parsed.success) throw new ApiRequestError(res.status, parsed.data.error.code, parsed.data.error.message, parsed.data.error.issues);
    throw new ApiRequestError(res.status, "http", `the server answered ${res.status} ${res.statusText}`);
  }
  return data as T;
}

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { publicOnlyRequestOptions, type ResolveAll } from "@volley/contracts/public-lookup";

export interface RemoteWriteFetchOptions {
  /** Hosted mode: the endpoint must be a public address when each push is sent (a name can be re-pointed since it was saved). */
  publicOnly: boolean;
  resolveAll?: ResolveAll;
  timeoutMs: number;
}

interface Answer {
  status: number;
  statusText: string;
  text(): Promise<string>;
}

/**
 * The `fetch` prometheus-remote-write calls, on node:http so hosted mode can resolve the endpoint
 * through the public-only lookup (global fetch takes no lookup). Redirects are not followed; the
 * receiver's answer is read up to 4 KB for the export's last-error text.
 */
export function remoteWriteFetch(opts: RemoteWriteFetchOptions) {
  return (url: string, init?: { method: string; headers: Record<string, string>; body: ArrayBufferLike }): Promise<Answer> => {
    const target = new URL(url);
    const guard = publicOnlyRequestOptions(target, opts.publicOnly, opts.resolveAll);
    if ("refused" in guard) return Promise.reject(new Error(`refused: ${guard.refused}`));
    const body = Buffer.from(init?.body ?? new ArrayBuffer(0));
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve, reject) => {
      const req = send(
        target,
        {
          method: init?.method ?? "POST",
          signal: AbortSignal.timeout(opts.timeoutMs),
          ...guard,
          headers: { ...init?.headers, "content-length": body.length, "user-agent": "Volley-Metrics/1" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            if (text.length < 4096) text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", text: async () => text.slice(0, 4096) }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  };
}

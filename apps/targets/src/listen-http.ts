import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens and resolves with the bound port (0 picks a free one); rejects on EADDRINUSE and the like. */
export async function listenHttp(http: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  return (http.address() as AddressInfo).port;
}

/** host:port as it appears in a URL (IPv6 literals bracketed). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Drops keep-alive and streaming requests so close() does not wait on clients. */
export function closeHttp(http: Server): Promise<void> {
  http.closeAllConnections();
  return new Promise<void>((resolve) => http.close(() => resolve()));
}

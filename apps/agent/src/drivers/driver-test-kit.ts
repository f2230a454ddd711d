import { createServer } from "node:http";
import { type AddressInfo, connect as tcpConnect } from "node:net";
import { afterEach, expect } from "vitest";
import { ConnectError } from "./connect-error";
import type { CloseInfo, ConnectOptions, Connection, Driver } from "./driver";

/** Anything a driver test starts and must stop: reference servers, silent listeners. */
interface Closable {
  close(): Promise<void> | void;
}

/**
 * Test-only scaffolding every driver test shares: servers and connections closed after each test
 * (a failing assertion never leaves a listener behind), and the usual round trip, close and
 * connect-error helpers.
 */
export function driverTestKit() {
  const servers: Closable[] = [];
  const conns: Connection[] = [];
  afterEach(async () => {
    for (const c of conns.splice(0)) c.close();
    for (const s of servers.splice(0)) await s.close();
  });
  return {
    /** Registers a server to close after the test and returns it. */
    async serve<T extends Closable>(started: Promise<T> | T): Promise<T> {
      const s = await started;
      servers.push(s);
      return s;
    },
    /** Closes a server now (to test a close by the server) and forgets it. */
    async stop(server: Closable): Promise<void> {
      const i = servers.indexOf(server);
      if (i >= 0) servers.splice(i, 1);
      await server.close();
    },
    async connect(driver: Driver, opts: Omit<ConnectOptions, "connectTimeoutMs"> & { connectTimeoutMs?: number }): Promise<Connection> {
      const conn = await driver.connect({ connectTimeoutMs: 3000, ...opts });
      conns.push(conn);
      return conn;
    },
  };
}

/** Sends one message and resolves with the first message that comes back. */
export function roundTrip(conn: Connection, payload: Buffer | string): Promise<Buffer | string> {
  const reply = new Promise<Buffer | string>((resolve) => conn.onMessage(resolve));
  conn.send(payload);
  return reply;
}

/** Resolves with `n` messages received on `conn`. */
export function collect(conn: Connection, n: number): Promise<(Buffer | string)[]> {
  const got: (Buffer | string)[] = [];
  return new Promise((resolve) =>
    conn.onMessage((d) => {
      got.push(d);
      if (got.length === n) resolve(got);
    }),
  );
}

export function closed(conn: Connection): Promise<CloseInfo> {
  return new Promise((resolve) => conn.onClose(resolve));
}

/** Closes the connection ourselves and checks it is reported as not by the server. */
export async function closeByUs(conn: Connection): Promise<void> {
  const info = closed(conn);
  conn.close();
  expect(await info).toMatchObject({ byServer: false });
}

/** The ConnectError a failing connect rejects with. */
export async function connectError(driver: Driver, opts: Omit<ConnectOptions, "connectTimeoutMs"> & { connectTimeoutMs?: number }): Promise<ConnectError> {
  const err: unknown = await driver.connect({ connectTimeoutMs: 2000, ...opts }).then(
    (c) => {
      c.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

/** A port nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

/** The payload every driver test sends: every byte value, so any text carriage is shown lossless. */
export const EVERY_BYTE = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** Whether something accepts TCP connections at the URL's host and port (a broker a test needs, or skips without). */
export function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: u.hostname, port: Number(u.port) || 80, timeout: 1000 });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

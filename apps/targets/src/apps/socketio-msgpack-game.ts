import msgpackParser from "socket.io-msgpack-parser";
import { idMaker, type TestApp, type TestAppOptions } from "./app-http";
import { startIoApp } from "./io-app";

export interface SocketioMsgpackGameStats {
  /** Socket.IO connections (each one a player). */
  connections: number;
  /** `echo` events received (each answered on `echo`, or through its acknowledgement). */
  echoes: number;
  /** `move` events accepted (x and y numbers). */
  moves: number;
  /** `moved` events and move acknowledgements sent. */
  moved: number;
  /** `move` events refused with `move_error`. */
  rejected: number;
}

/**
 * A Socket.IO 4 game server created with `parser: require("socket.io-msgpack-parser")`, as apps
 * that want smaller frames write it: every packet is one MessagePack binary frame, so a client on
 * Socket.IO's default parser never completes its connect. `move` `{ clientMoveId, x, y }` is
 * answered with `moved` `{ clientMoveId, player, x, y, tick, ts }` (player: a server-made id per
 * connection, tick: the server's move count, ts: its epoch ms), or through the acknowledgement
 * with `{ ok: true, tick }` when the emit asks for one; a move without numeric x and y gets
 * `move_error` `{ clientMoveId, error }`. `echo` answers its arguments on `echo` (or the ack), as
 * they came. Counters at GET /stats.
 */
export async function startSocketioMsgpackGame(options: TestAppOptions = {}): Promise<TestApp<SocketioMsgpackGameStats>> {
  const counters: SocketioMsgpackGameStats = { connections: 0, echoes: 0, moves: 0, moved: 0, rejected: 0 };
  const stats = () => ({ ...counters });
  const playerId = idMaker("p");
  return startIoApp(options, { stats, io: { parser: msgpackParser } }, (io) =>
    io.on("connection", (socket) => {
      counters.connections++;
      const player = playerId();
      socket.on("echo", (...args: unknown[]) => {
        counters.echoes++;
        const ack = typeof args.at(-1) === "function" ? (args.pop() as (...a: unknown[]) => void) : undefined;
        if (ack) ack(...args);
        else socket.emit("echo", ...args);
      });
      socket.on("move", (data: unknown, ack?: unknown) => {
        const m = (data ?? {}) as { clientMoveId?: unknown; x?: unknown; y?: unknown };
        if (typeof m.x !== "number" || typeof m.y !== "number") {
          counters.rejected++;
          return void socket.emit("move_error", { clientMoveId: m.clientMoveId, error: "x and y must be numbers" });
        }
        const tick = ++counters.moves;
        counters.moved++;
        if (typeof ack === "function") (ack as (r: unknown) => void)({ ok: true, tick });
        else socket.emit("moved", { clientMoveId: m.clientMoveId, player, x: m.x, y: m.y, tick, ts: Date.now() });
      });
    }),
  );
}

import protobuf from "protobufjs";
import type { RawData } from "ws";
import type { TestApp, TestAppOptions } from "./app-http";
import { startWsApp } from "./ws-app";

export const PROTOBUF_WS_PATH = "/trade";

/** The server's own schema: an Order in, a Fill (a different type carrying the order's id) out. */
export const TRADE_PROTO = `syntax = "proto3";
package trade;
enum Side { BUY = 0; SELL = 1; }
message Order { string id = 1; string symbol = 2; uint32 qty = 3; Side side = 4; repeated string tags = 5; }
message Fill { string order_id = 1; uint32 filled = 2; uint64 server_seq = 3; Side side = 4; }
`;

export interface ProtobufWsStats {
  /** Binary frames that decoded as a trade.Order with an id and a symbol. */
  orders: number;
  /** trade.Fill replies sent (one per order). */
  fills: number;
  /** Binary frames that are not an Order (or lack its id or symbol): left unanswered. */
  malformed: number;
  /** Text frames: counted, unanswered. */
  textFrames: number;
}

/**
 * A trading gateway speaking protobuf over binary WebSocket frames at `/trade` (TRADE_PROTO):
 * each `trade.Order` is answered with a `trade.Fill` whose `order_id` is the order's id, `filled`
 * its qty and `server_seq` the server's own counter. Frames that do not decode as an Order with
 * an id and a symbol are counted as malformed and not answered. Counters at GET /stats.
 */
export function startProtobufWs(options: TestAppOptions = {}): Promise<TestApp<ProtobufWsStats>> {
  const root = protobuf.parse(TRADE_PROTO, { keepCase: true }).root;
  const Order = root.lookupType("trade.Order");
  const Fill = root.lookupType("trade.Fill");
  const counters: ProtobufWsStats = { orders: 0, fills: 0, malformed: 0, textFrames: 0 };
  let serverSeq = 0;
  const stats = () => ({ ...counters });
  return startWsApp(options, { path: PROTOBUF_WS_PATH, stats }, (ws) => {
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (!isBinary) return void counters.textFrames++;
      let order: { id?: string; symbol?: string; qty?: number; side?: number };
      try {
        order = Order.toObject(Order.decode(data as Buffer)) as typeof order;
      } catch {
        return void counters.malformed++;
      }
      if (!order.id || !order.symbol) return void counters.malformed++;
      counters.orders++;
      const fill = Fill.encode(Fill.fromObject({ order_id: order.id, filled: order.qty ?? 0, server_seq: ++serverSeq, side: order.side ?? 0 })).finish();
      counters.fills++;
      ws.send(fill);
    });
  });
}

import { describe, expect, it } from "vitest";
import { decodeEnginePacket, splitPollingPayload } from "./socketio-packets";

describe("Socket.IO framing", () => {
  it("decodes events, acks, connects with auth or a v2 query, and leaves Engine.IO control packets out", () => {
    expect(decodeEnginePacket('42["chat",{"text":"hi"},2]')).toEqual({ kind: "event", nsp: "/", event: "chat", args: [{ text: "hi" }, 2] });
    expect(decodeEnginePacket('42/admin,17["kick",{"id":1}]')).toEqual({ kind: "event", nsp: "/admin", event: "kick", args: [{ id: 1 }], ackId: 17 });
    expect(decodeEnginePacket('43/admin,17[{"ok":true}]')).toEqual({ kind: "ack", nsp: "/admin", ackId: 17, args: [{ ok: true }] });
    expect(decodeEnginePacket('40{"token":"t"}')).toEqual({ kind: "connect", nsp: "/", data: { token: "t" } });
    expect(decodeEnginePacket("40/chat?token=t&v=1,")).toEqual({ kind: "connect", nsp: "/chat", data: undefined, query: { token: "t", v: "1" } });
    expect(decodeEnginePacket('44{"message":"unauthorized"}')).toEqual({ kind: "connect_error", nsp: "/", data: { message: "unauthorized" } });
    expect(decodeEnginePacket('451-["upload",{"_placeholder":true,"num":0}]')).toEqual({ kind: "binary", nsp: "/" });
    for (const control of ["2", "3", "2probe", "3probe", "5", "6", '0{"sid":"x"}', "42[not json"])
      expect(decodeEnginePacket(control)).toEqual({ kind: "other" });
  });

  it("splits polling bodies of Engine.IO 4 (\\x1e) and 3 (length-prefixed)", () => {
    expect(splitPollingPayload('40{"a":1}\x1e42["x"]')).toEqual(['40{"a":1}', '42["x"]']);
    expect(splitPollingPayload('2:409:42["x",1]')).toEqual(["40", '42["x",1]']);
    expect(splitPollingPayload("ok")).toEqual(["ok"]);
  });
});

import { describe, expect, it } from "vitest";
import { matches } from "./connection-setup";
import { asJson, NO_JSON } from "./flow-codec";
import { compileMatch } from "./flow-program";

describe("asJson: an incoming message as the value a path reads", () => {
  it("parses JSON text and bytes; text that is not JSON is itself, bytes that are not JSON are none", () => {
    expect(asJson('{"id":7}')).toEqual({ id: 7 });
    expect(asJson(Buffer.from('{"id":7}'))).toEqual({ id: 7 });
    expect(asJson("Hello from Artillery")).toBe("Hello from Artillery");
    expect(asJson(Buffer.from([0xc1, 0x00]))).toBe(NO_JSON);
    expect(asJson({ already: "a value" })).toEqual({ already: "a value" });
  });

  it("a Socket.IO event's plain string argument matches at $, and no deeper path finds anything in it", () => {
    const ctx = { connIndex: 0, msgSeq: 0, msgId: "m", vars: {} } as never;
    const whole = compileMatch({ path: "$", equals: "Hello from Artillery" }, "echoResponse", asJson);
    expect(matches(whole, { event: "echoResponse", data: "Hello from Artillery" } as never, ctx)).toBe(true);
    expect(matches(whole, { event: "echoResponse", data: "Hello from someone else" } as never, ctx)).toBe(false);
    const deeper = compileMatch({ path: "$.id" }, "echoResponse", asJson);
    expect(matches(deeper, { event: "echoResponse", data: "Hello from Artillery" } as never, ctx)).toBe(false);
  });
});

import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planYaml, runBin, tempDir, writeFile } from "./test-support";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("volley validate (the bin, as a process)", () => {
  it("exits 0 and describes a valid plan in one line", async () => {
    const file = writeFile(dir, "good.yaml", planYaml("smoke"));
    const r = await runBin(["validate", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is valid: smoke \\(ws ws://127\\.0\\.0\\.1:9001/echo; 5 connections`));
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("exits 2 and prints each issue as `path: message` on stderr", async () => {
    const file = writeFile(
      dir,
      "bad.yaml",
      'name: ""\ntarget: { url: "ftp://x" }\nconnections: { count: 0 }\nscenario: { kind: echo, message: { rate: 1 }, duration: 1s }\n',
    );
    const r = await runBin(["validate", file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("is not a valid plan");
    expect(r.stderr).toMatch(/^name: .+$/m);
    expect(r.stderr).toMatch(/^target\.url: .+$/m);
    expect(r.stderr).toMatch(/^connections\.count: .+$/m);
  });

  it("exits 2 on a missing scenario.message, saying what belongs there with an example", async () => {
    const file = writeFile(
      dir,
      "no-message.yaml",
      'name: x\ntarget: { url: "ws://127.0.0.1:9001/echo" }\nconnections: { count: 1 }\nscenario: { kind: echo, duration: 1s }\n',
    );
    const r = await runBin(["validate", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${file} is not a valid plan (1 issue):\nscenario.message: required: the messages each connection sends, like message: { rate: 10 } (10 a second per connection; bytes, per, arrival and timeout have defaults)\n`,
    );
  });

  it("exits 2 on a misspelled threshold metric, naming it and the nearest known one", async () => {
    const file = writeFile(dir, "typo.yaml", planYaml("typo", ["latncy.p95 < 200ms"]));
    const r = await runBin(["validate", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^thresholds\.0: unknown metric "latncy.p95" \(did you mean "latency.p95"\?\)/m);
  });

  it("exits 2 with one line for a missing file or an unknown flag", async () => {
    const missing = await runBin(["validate", `${dir}/nope.yaml`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe(`error: cannot read plan file ${dir}/nope.yaml: no such file`);
    const flag = await runBin(["validate", "x.yaml", "--frobnicate"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim()).toBe("error: unknown option '--frobnicate'");
  });

  it("reads a protobuf codec's protoFile relative to the plan file (inlined, as it is sent to the hub), and names one it cannot read", async () => {
    mkdirSync(path.join(dir, "proto"), { recursive: true });
    writeFile(dir, "proto/trade.proto", 'syntax = "proto3";\npackage trade;\nmessage Order { string id = 1; uint32 qty = 2; }\n');
    const plan = (protoFile: string) =>
      `name: trade\ntarget: { url: "ws://127.0.0.1:9001/trade", protocol: ws }\nconnections: { count: 1, rate: 1 }\nscenario: { kind: echo, duration: 1s, message: { rate: 1 } }\nflow:\n  codec: { protobuf: { protoFile: ${protoFile}, type: trade.Order } }\n  messages:\n    - json: { id: "{{ msg.id }}", qty: "{{ msg.seq }}" }\n      reply: { match: { path: $.id, equals: "{{ msg.id }}" } }\n`;
    const good = await runBin(["validate", writeFile(dir, "trade.yaml", plan("proto/trade.proto"))], {}, "/");
    expect(good.code, good.stderr).toBe(0);
    const bad = await runBin(["validate", writeFile(dir, "trade-missing.yaml", plan("proto/gone.proto"))]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^flow\.codec\.protobuf\.protoFile: cannot read proto\/gone\.proto \(ENOENT\): give a path relative to the plan file/m);
  });
});

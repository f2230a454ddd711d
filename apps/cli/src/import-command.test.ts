import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { planSchema } from "@volley/contracts";
import { runBin, tempDir, writeFile } from "./test-support";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURES = path.resolve(import.meta.dirname, "../../../packages/plan-import/fixtures");

describe("volley import (the bin, as a process)", () => {
  it("har: prints a valid plan as YAML on stdout and what to check on stderr", async () => {
    const r = await runBin(["import", "har", path.join(FIXTURES, "socketio-chat.har"), "--target", "http://127.0.0.1:9010"]);
    expect(r.code, r.stderr).toBe(0);
    const plan = planSchema.parse(parse(r.stdout));
    expect(plan).toMatchObject({ name: "Imported from socketio-chat.har", target: { url: "http://127.0.0.1:9010/", protocol: "socketio" } });
    expect(plan.flow?.messages?.[0]).toMatchObject({ event: "chat", reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } } });
    expect(r.stderr).toMatch(/^Check before running:\n {2}- /);
    expect(r.stderr).toContain("the schedule is a small default");
  });

  it("har: --origin moves a login recorded on another origin; a malformed one is refused naming the form", async () => {
    const har = path.join(FIXTURES, "ws-shop-sso.har");
    const recorded = (JSON.parse(readFileSync(har, "utf8")) as { log: { entries: { request: { method: string; url: string } }[] } }).log.entries.find(
      (e) => e.request.method === "POST",
    )!.request.url;
    const r = await runBin(["import", "har", har, "--target", "ws://127.0.0.1:9004", "--origin", `${new URL(recorded).origin}=http://127.0.0.1:9005`]);
    expect(r.code, r.stderr).toBe(0);
    const plan = planSchema.parse(parse(r.stdout));
    expect(plan.flow?.setup[0]).toMatchObject({ request: { url: "http://127.0.0.1:9005/api/login", capture: { token: "$.token" } } });
    expect(plan.target.url).toBe("ws://127.0.0.1:9004/shop");
    const bad = await runBin(["import", "har", har, "--origin", "auth.example.com"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --origin auth\.example\.com: write it as recorded=new, each an http\(s\) origin/);
  });

  it("artillery: reads --payload files by the name the script gives them", async () => {
    const users = writeFile(dir, "people.csv", "username,password\nzed,pw\n");
    const r = await runBin(["import", "artillery", path.join(FIXTURES, "artillery/socketio-chat.yml"), "--payload", `users.csv=${users}`]);
    expect(r.code, r.stderr).toBe(0);
    const plan = planSchema.parse(parse(r.stdout));
    expect(plan.flow?.data?.csv).toBe("username,password\nzed,pw");
    expect(r.stderr).not.toContain("was not given");
  });

  it("exits 2 with one line naming the problem", async () => {
    const notHar = writeFile(dir, "x.har", JSON.stringify({ log: {} }));
    const r = await runBin(["import", "har", notHar]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(`error: ${notHar}: not a HAR: log.entries missing (a HAR file is { log: { entries: [...] } })`);
    const badPayload = await runBin(["import", "artillery", path.join(FIXTURES, "artillery/socketio-chat.yml"), "--payload", "users.csv"]);
    expect(badPayload.code).toBe(2);
    expect(badPayload.stderr).toMatch(/^error: --payload users\.csv: write it as name=path/);
  });
});

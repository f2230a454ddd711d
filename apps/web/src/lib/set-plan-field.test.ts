import { TEMPLATES } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { setPlanField } from "./set-plan-field";

const lines = (text: string) => text.split("\n");
const commentLines = (text: string) => lines(text).filter((l) => l.includes("#"));
/** Lines of `after` not in `before`, and the other way round. */
const lineDiff = (before: string, after: string) => ({
  added: lines(after).filter((l) => !lines(before).includes(l)),
  removed: lines(before).filter((l) => !lines(after).includes(l)),
});

// The plan editor's common fields, as plan-form.tsx writes them.
const FORM_EDITS: [(string | number)[], string | number][] = [
  [["name"], "renamed: a, b"],
  [["target", "url"], "ws://127.0.0.1:9101/echo"],
  [["target", "protocol"], "sockjs"],
  [["connections", "count"], 7],
  [["connections", "rate"], 3],
  [["scenario", "duration"], "5m"],
];

describe("setPlanField", () => {
  it("changes only the field's own line in every template; every comment, space and key stays", () => {
    for (const t of TEMPLATES) {
      for (const [path, value] of FORM_EDITS) {
        const out = setPlanField(t.yaml, path, value)!;
        const what = `${t.id} ${path.join(".")}`;
        const expected = parse(t.yaml) as Record<string, Record<string, unknown>>;
        if (path.length === 1) expected[path[0]!] = value as never;
        else expected[path[0]!]![path[1]!] = value;
        expect(parse(out), what).toEqual(expected);
        if (out === t.yaml) continue; // the template already has this value
        const { added, removed } = lineDiff(t.yaml, out);
        expect(added.length, what).toBe(1);
        expect(removed.length, what).toBeLessThanOrEqual(1);
        expect(lines(out).length - lines(t.yaml).length, what).toBe(removed.length === 1 ? 0 : 1);
        // A comment on the edited line may move with its value; no comment is lost.
        expect(commentLines(out).length, what).toBe(commentLines(t.yaml).length);
      }
    }
  });

  it("replaces the value in place, keeping the comment's column", () => {
    const text = "name: x\nconnections:\n  count: 100                # rerun with 1000\n  rate: 10\n";
    expect(setPlanField(text, ["connections", "count"], 250)).toBe("name: x\nconnections:\n  count: 250                # rerun with 1000\n  rate: 10\n");
  });

  it("adds a missing field to its map, flow or block, and a missing map as a flow map", () => {
    expect(setPlanField("connections: { count: 200 }   # at most\n", ["connections", "rate"], 5)).toBe("connections: { count: 200, rate: 5 }   # at most\n");
    expect(setPlanField("scenario:\n  kind: echo   # the echo\n# later\nagents: {}\n", ["scenario", "duration"], "1m")).toBe(
      "scenario:\n  kind: echo   # the echo\n  duration: 1m\n# later\nagents: {}\n",
    );
    expect(setPlanField("name: x  # keep\n", ["sweep", "hold"], "4s")).toBe("name: x  # keep\nsweep: { hold: 4s }\n");
  });

  it("keeps the author's quotes and quotes what must be", () => {
    expect(setPlanField('name: "old"  # q\n', ["name"], "new")).toBe('name: "new"  # q\n');
    expect(setPlanField("name: 'old'\n", ["name"], "it's")).toBe("name: 'it''s'\n");
    const flow = setPlanField("target: { url: ws://a/b, protocol: ws }\n", ["target", "url"], "ws://a/b?x={y},z")!;
    expect(parse(flow)).toEqual({ target: { url: "ws://a/b?x={y},z", protocol: "ws" } });
    expect(setPlanField("name: x\n", ["name"], "123")).toBe('name: "123"\n');
  });

  it("writes nothing into YAML that does not parse", () => {
    expect(setPlanField("name: [unclosed", ["name"], "x")).toBeNull();
  });
});

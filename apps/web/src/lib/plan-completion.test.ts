import { CompletionContext } from "@codemirror/autocomplete";
import { yaml } from "@codemirror/lang-yaml";
import { ensureSyntaxTree } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { planJsonSchema } from "@volley/contracts";
import { stateExtensions } from "codemirror-json-schema";
import { yamlCompletion } from "codemirror-json-schema/yaml";
import type { JSONSchema7 } from "json-schema";
import { describe, expect, it } from "vitest";
import { sequenceItemCompletion } from "./sequence-item-completion";

/** The editor's completion (yaml-editor.tsx: the same extensions) at the `|` in `doc`. */
async function complete(doc: string): Promise<string[]> {
  const pos = doc.indexOf("|");
  const created = EditorState.create({ doc: doc.replace("|", ""), extensions: [yaml(), stateExtensions(planJsonSchema() as JSONSchema7)] });
  // A state parses the document on a small time budget (a view keeps parsing in the background):
  // finish the parse, then take a state that holds the whole tree, as a view's would by then.
  ensureSyntaxTree(created, created.doc.length, 10_000);
  const state = created.update({}).state;
  const ctx = new CompletionContext(state, pos, true);
  // Both sources the editor registers: CodeMirror merges their options.
  const results = [await yamlCompletion()(ctx), await sequenceItemCompletion(planJsonSchema() as JSONSchema7)(ctx)];
  return results.flatMap((res) => (Array.isArray(res) || !res ? [] : res.options.map((o) => o.label)));
}

const base = "name: x\ntarget: { url: ws://127.0.0.1:1, protocol: ws }\nconnections: { count: 1, rate: 1 }\nscenario: { kind: echo, duration: 1s }\n";

describe("plan editor completion", () => {
  it("completes the flow and its fields: setup, a request's, a waitFor's, a message's and its reply's", async () => {
    expect(await complete(`${base}fl|`)).toContain("flow");
    expect(await complete(`${base}flow:\n  samples: 3\n  se|`)).toEqual(["setup"]);
    expect(await complete(`${base}flow:\n  setup:\n    - request:\n        url: /login\n        ca|`)).toEqual(["capture"]);
    expect(await complete(`${base}flow:\n  setup:\n    - waitFor:\n        event: joined\n        ti|`)).toEqual(["timeout"]);
    expect(await complete(`${base}flow:\n  messages:\n    - event: chat\n      re|`)).toEqual(expect.arrayContaining(["reply", "request"]));
    expect(await complete(`${base}flow:\n  messages:\n    - reply:\n        event: message\n        ma|`)).toEqual(["match"]);
    expect(await complete(`${base}flow:\n  data:\n    reuse: true\n    cs|`)).toEqual(["csv"]);
  });

  it("offers an item's keys where a new item starts: setup step kinds, message fields, stages", async () => {
    const steps = await complete(`${base}flow:\n  setup:\n    - |`);
    expect(steps).toEqual(["request", "connect", "send", "waitFor", "think"]);
    expect(await complete(`${base}flow:\n  setup:\n    - request: { url: /login }\n    - wa|`)).toEqual(["waitFor"]);
    expect(await complete(`${base}flow:\n  setup:\n  - thi|`)).toEqual(["think"]);
    expect(await complete(`${base}flow:\n  messages:\n    - |`)).toEqual(expect.arrayContaining(["json", "reply", "weight"]));
    // Not an item start: the key completion alone answers, nothing doubled.
    expect(await complete(`${base}flow:\n  setup:\n    - waitFor:\n        event: joined\n        ti|`)).toEqual(["timeout"]);
  });

  it("completes binary bodies: codec on the flow and a message, protobuf's fields, a binary literal", async () => {
    expect(await complete(`${base}flow:\n  samples: 3\n  co|`)).toEqual(["codec"]);
    expect(await complete(`${base}flow:\n  messages:\n    - json: {}\n      bi|`)).toEqual(["binary"]);
    expect(await complete(`${base}flow:\n  codec:\n    protobuf:\n      type: shop.Order\n      re|`)).toEqual(["replyType"]);
  });

  it("completes an MQTT message's and a user's send's qos", async () => {
    const mqtt = base.replace("protocol: ws", "protocol: mqtt");
    expect(await complete(`${mqtt}flow:\n  messages:\n    - event: devices/1/cmd\n      qo|`)).toEqual(["qos"]);
    expect(await complete(`${mqtt}flow:\n  steps:\n    - send:\n        event: devices/1/cmd\n        qo|`)).toEqual(["qos"]);
  });
});

"use client";

import { parsePlanDocument, planJsonSchema } from "@volley/contracts";
import { linter, type Diagnostic } from "@codemirror/lint";
import { basicSetup, EditorView } from "codemirror";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { stateExtensions } from "codemirror-json-schema";
import { yamlCompletion, yamlSchemaHover } from "codemirror-json-schema/yaml";
import { yaml, yamlLanguage } from "@codemirror/lang-yaml";
import { hoverTooltip } from "@codemirror/view";
import type { JSONSchema7 } from "json-schema";
import { useEffect, useRef } from "react";
import { planIssueRanges } from "../lib/plan-issue-ranges";
import { sequenceItemCompletion } from "../lib/sequence-item-completion";

/**
 * Inline errors from the zod schema itself, the judge the API and CLI use, so the editor marks exactly
 * what a save would refuse, with the same words: threshold metric names and cross-field rules
 * included, which the JSON Schema cannot express.
 */
const planLinter = linter(
  (view): Diagnostic[] => {
    const text = view.state.doc.toString();
    const parsed = parsePlanDocument(text);
    if (parsed.ok) return [];
    return planIssueRanges(text, parsed.issues).map((r) => ({
      from: r.from,
      to: Math.min(r.to, text.length),
      severity: "error",
      message: r.message,
      source: "plan",
    }));
  },
  { delay: 300 },
);

interface Props {
  value: string;
  onChange: (text: string) => void;
  /** Ctrl/Cmd+Enter. */
  onSubmit?: () => void;
  label: string;
  invalid?: boolean;
}

/**
 * The plan's YAML in CodeMirror 6, with completion and hover docs from the plan's JSON Schema
 * (generated from the zod schema) and inline errors from the zod schema itself.
 */
export function YamlEditor({ value, onChange, onSubmit, label, invalid }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // The latest callbacks, without re-creating the editor (which would lose cursor and history).
  const latest = useRef({ onChange, onSubmit });
  latest.current = { onChange, onSubmit };

  // biome-ignore lint/correctness/useExhaustiveDependencies: created once (label included); `value` changes from outside are applied below.
  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      doc: value,
      extensions: [
        basicSetup,
        keymap.of([{ key: "Mod-Enter", run: () => (latest.current.onSubmit?.(), true) }, indentWithTab]),
        // Completion and hover docs from the plan's JSON Schema; the errors from zod (planLinter).
        yaml(),
        yamlLanguage.data.of({ autocomplete: yamlCompletion() }),
        // At `- ` (a new list item: a flow's setup step, a message), which the source above skips.
        yamlLanguage.data.of({ autocomplete: sequenceItemCompletion(planJsonSchema() as JSONSchema7) }),
        hoverTooltip(yamlSchemaHover()),
        stateExtensions(planJsonSchema() as JSONSchema7),
        planLinter,
        EditorView.updateListener.of((u) => {
          if (u.docChanged) latest.current.onChange(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    });
    view.current = v;
    return () => v.destroy();
  }, []);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} className="cm-host" data-testid="plan-yaml" aria-invalid={invalid} />;
}

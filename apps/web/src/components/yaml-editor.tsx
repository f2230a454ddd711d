"use client";

import { planJsonSchema } from "@volley/contracts";
import { basicSetup, EditorView } from "codemirror";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { yamlSchema } from "codemirror-json-schema/yaml";
import type { JSONSchema7 } from "json-schema";
import { useEffect, useRef } from "react";

interface Props {
  value: string;
  onChange: (text: string) => void;
  /** Ctrl/Cmd+Enter. */
  onSubmit?: () => void;
  label: string;
  invalid?: boolean;
}

/**
 * The plan's YAML in CodeMirror 6, with completion, hover docs and inline errors from the plan's
 * JSON Schema (generated from the zod schema). The zod check beside the editor stays the judge:
 * it also knows the cross-field rules JSON Schema cannot say.
 */
export function YamlEditor({ value, onChange, onSubmit, label, invalid }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // The latest callbacks, without re-creating the editor (which would lose cursor and history).
  const latest = useRef({ onChange, onSubmit });
  latest.current = { onChange, onSubmit };

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      doc: value,
      extensions: [
        basicSetup,
        keymap.of([
          { key: "Mod-Enter", run: () => (latest.current.onSubmit?.(), true) },
          indentWithTab,
        ]),
        yamlSchema(planJsonSchema() as JSONSchema7),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) latest.current.onChange(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    });
    view.current = v;
    return () => v.destroy();
    // Created once; `value` changes from outside are applied below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} className="cm-host" data-testid="plan-yaml" aria-invalid={invalid} />;
}

import type { Plan } from "@volley/contracts";
import { stringify } from "yaml";

/**
 * The text the plan editor opens with: the YAML as its author saved it, or, for a plan saved as JSON
 * (or before plans kept their text), the stored plan written out as YAML, defaults and all.
 */
export function planEditorText(saved: { plan: Plan; yaml: string | null }): string {
  return saved.yaml ?? stringify(saved.plan);
}

import type { PlanInput } from "@volley/contracts";
import { stringify } from "yaml";

/** The plan as the YAML a user edits (templates quoted, long lines kept whole). */
export function planToYaml(plan: PlanInput): string {
  return stringify(plan, { lineWidth: 0 });
}

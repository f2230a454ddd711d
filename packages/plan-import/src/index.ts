export { importHar, type ImportResult } from "./import-har";
export { importArtillery, type ArtilleryImportOptions } from "./import-artillery";
export { PlanImportError } from "./import-error";
export { DEFAULT_SCHEDULE, type ImportOptions } from "./schedule-options";
export { planToYaml } from "./plan-yaml";

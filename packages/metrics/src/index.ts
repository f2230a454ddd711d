export * from "./histogram";
export * from "./summary";
export * from "./interval-recorder";
export * from "./aggregate";
export * from "./thresholds";
export * from "./summarize-run";

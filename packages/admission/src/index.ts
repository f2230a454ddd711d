export * from "./admission-env";
export * from "./admission-refusal";
export * from "./admit-plan";
export * from "./target-policy";
export * from "./target-verification";

export * from "./redis";
export * from "./job-definition";
export * from "./catalog";
export * from "./plan-schedulers";
export * from "./retention-job";

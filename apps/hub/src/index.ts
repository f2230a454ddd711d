export { startHub, type HubConfig, type RunningHub } from "./hub";
export { planShards } from "./runs/shard-planner";

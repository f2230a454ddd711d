/**
 * The run's split across agents lives in contracts (shard-split.ts): an agent splits its shard
 * across its worker threads with the very same function.
 */
export { planShards, splitProportionally } from "@volley/contracts";

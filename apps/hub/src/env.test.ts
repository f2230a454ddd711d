import { describe, expect, it } from "vitest";
import { DEFAULT_INGEST_LIMITS } from "./gateway/ingest-budget";
import { loadEnv } from "./env";

const base = { DATABASE_URL: "postgres://u@127.0.0.1:5432/volley", REDIS_URL: "redis://127.0.0.1:6379" };

describe("hub env", () => {
  it("defaults the agent limits to what the gateway assumes (README 'Agent limits')", () => {
    const env = loadEnv(base);
    expect({
      windowMs: env.HUB_INGEST_WINDOW_S * 1000,
      agentMsPerS: env.HUB_INGEST_AGENT_MS_PER_S,
      orgMsPerS: env.HUB_INGEST_ORG_MS_PER_S,
      agentBytesPerS: env.HUB_INGEST_AGENT_BYTES_PER_S,
      orgBytesPerS: env.HUB_INGEST_ORG_BYTES_PER_S,
      maxRefusedFrames: env.HUB_INGEST_MAX_REFUSED_FRAMES,
      maxFrameHistogramBytes: env.HUB_MAX_FRAME_HISTOGRAM_BYTES,
      cutOffMs: DEFAULT_INGEST_LIMITS.cutOffMs,
    }).toEqual(DEFAULT_INGEST_LIMITS);
    expect([env.HUB_MAX_POOLS_PER_ORG, env.HUB_MAX_POOLS_PER_ACCOUNT, env.HUB_MAX_AGENTS_PER_TOKEN]).toEqual([50, 50, 200]);
  });

  it("reads the limits as whole numbers", () => {
    const env = loadEnv({ ...base, HUB_INGEST_AGENT_MS_PER_S: "20", HUB_MAX_AGENTS_PER_TOKEN: "1000", HUB_MAX_POOLS_PER_ACCOUNT: "3" });
    expect([env.HUB_INGEST_AGENT_MS_PER_S, env.HUB_MAX_AGENTS_PER_TOKEN, env.HUB_MAX_POOLS_PER_ACCOUNT]).toEqual([20, 1000, 3]);
  });
});

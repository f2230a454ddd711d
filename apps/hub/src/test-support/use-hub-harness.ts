import { afterAll, beforeAll, inject } from "vitest";
import "@volley/devstack/vitest-context";
import type { HubConfig } from "../hub";
import { startHubHarness, TEST_AGENT_TOKEN, type HubHarness, type HubHarnessOptions } from "./hub-harness";
import { ScriptedAgent, type ScriptedAgentOptions } from "./scripted-agent";

/** The file's hub harness, readable once beforeAll has started it; afterAll closes it. */
export interface UsedHubHarness extends Omit<HubHarness, "close"> {
  /** A ScriptedAgent on this hub (or `hubUrl`) with the test token unless `token` is given; closed in afterAll. */
  connect(opts?: Partial<ScriptedAgentOptions>): Promise<ScriptedAgent>;
}

/**
 * Registers the test file's beforeAll/afterAll for a hub harness on a Redis logical database leased
 * to it alone. Hooks a file adds after this call run after the hub has started and, in vitest's
 * stack order, before it closes.
 */
export function useHubHarness(hub?: Partial<HubConfig>, opts: Pick<HubHarnessOptions, "hubDatabaseUrl"> = {}): UsedHubHarness {
  let harness: HubHarness | undefined;
  const agents: ScriptedAgent[] = [];
  beforeAll(async () => {
    harness = await startHubHarness({ databaseServerUrl: inject("databaseServerUrl"), redisUrl: inject("redisUrl"), hub, ...opts });
  });
  afterAll(async () => {
    for (const a of agents) a.close();
    await harness?.close();
  });
  const started = (): HubHarness => {
    if (!harness) throw new Error("the hub harness starts in beforeAll: use it inside hooks and tests, not at module or describe level");
    return harness;
  };
  // Getters, not a copy: the harness does not exist yet when the file's top level runs.
  return {
    get hub() {
      return started().hub;
    },
    get databaseUrl() {
      return started().databaseUrl;
    },
    get redisUrl() {
      return started().redisUrl;
    },
    get redisDb() {
      return started().redisDb;
    },
    get hubUrl() {
      return started().hubUrl;
    },
    get db() {
      return started().db;
    },
    get redis() {
      return started().redis;
    },
    get runs() {
      return started().runs;
    },
    startRun: (plan) => started().startRun(plan),
    waitForFinal: (runId, timeoutMs) => started().waitForFinal(runId, timeoutMs),
    async connect(opts = {}) {
      const a = await ScriptedAgent.connect({ ...opts, hubUrl: opts.hubUrl ?? started().hubUrl, token: opts.token ?? TEST_AGENT_TOKEN });
      agents.push(a);
      return a;
    },
  };
}

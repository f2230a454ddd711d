import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { startApp, TARGETS_ON_FREE_PORTS, type ManagedProcess } from "@volley/devstack";
import { createNetnsLab, netnsUnavailable, type NetnsLab } from "./netns";
import { ECHO_DELAY_MS, expectExactSplitAndMerge, shardedEchoPlan } from "./sharded-run";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

const AGENTS = 3;
/**
 * The same port in every namespace: the plan names one target URL, and in each namespace
 * 127.0.0.1 is that namespace's own loopback, so each agent loads only its own host's target.
 * A fresh namespace has every port free.
 */
const TARGET_PORT = 19001;
const TARGET_URL = `ws://127.0.0.1:${TARGET_PORT}/echo?delay=${ECHO_DELAY_MS}`;

const unavailable = await netnsUnavailable();
if (unavailable) console.warn(`netns-agents: skipped: ${unavailable}`);

/** The source address the hub logged for each agent name ("agent connected"), IPv4-mapped prefix dropped. */
function agentAddresses(output: string[]): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const line of output) {
    if (!line.startsWith("[hub] {") || !line.includes('"agent connected"')) continue;
    const entry = JSON.parse(line.slice("[hub] ".length)) as { name?: string; address?: string };
    if (entry.name && entry.address) addresses.set(entry.name, entry.address.replace(/^::ffff:/, ""));
  }
  return addresses;
}

describe.skipIf(unavailable !== null)("one plan over three agents on three network-namespace hosts", () => {
  let lab: NetnsLab | undefined;
  let stack: Stack | undefined;
  const targets: ManagedProcess[] = [];
  const targetOutput: string[] = [];

  beforeAll(async () => {
    lab = await createNetnsLab(AGENTS);
    // One targets process per host, reachable only from inside it (127.0.0.1 of its namespace).
    for (const [i, host] of lab.hosts.entries()) {
      const env = { ...process.env, ...TARGETS_ON_FREE_PORTS, WS_ECHO_PORT: String(TARGET_PORT), LOG_LEVEL: "info" };
      targets.push(startApp("targets", env, (l) => targetOutput.push(`[targets-${i + 1}] ${l}`), { prefix: host.exec }));
    }
    await Promise.all(targets.map((t) => t.waitFor(/ws echo listening/, 60_000)));
    // Web and the hub stay in the root namespace on their defaults (web on every interface, the hub
    // on loopback); the hosts reach the hub through web's relay at the bridge address.
    stack = await startStack({ agents: AGENTS, agentWebHost: lab.hubAddress, agentPrefix: (i) => lab!.hosts[i]!.exec });
  });
  afterAll(async () => {
    try {
      await stack?.stop();
      await Promise.all(targets.map((t) => t.stop()));
    } finally {
      // Even when a stop failed: the namespaces' leftovers are killed, the links removed.
      await lab?.destroy();
    }
  });

  it("splits the plan exactly, merges counts and percentiles exactly, and sees each agent from its own host's address", async () => {
    const plan = shardedEchoPlan("e2e three netns hosts", TARGET_URL, AGENTS);
    const created = await api<{ id: string }>(stack!, "POST", "/api/v1/runs", { plan });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack!, created.body.id, 120_000);
    expect(run.status, `${run.reason}\n${[...stack!.output, ...targetOutput].slice(-30).join("\n")}`).toBe("passed");
    await expectExactSplitAndMerge(stack!, run, plan);

    // Each agent's control connection crossed its own veth: the hub saw three distinct source
    // addresses, each the address of the host the agent was started in.
    const seen = agentAddresses(stack!.output);
    const expected = new Map(lab!.hosts.map((h, i) => [i === 0 ? "e2e-agent" : `e2e-agent-${i + 1}`, h.address]));
    expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(expected));
    expect(new Set(seen.values()).size).toBe(AGENTS);
    console.info(
      `netns hosts: ${[...seen].map(([name, address]) => `${name}@${address}`).join(", ")}; web (and its hub relay) on ${lab!.hubAddress}; latency p50 ${run.summary!.latency.p50} ms, p99 ${run.summary!.latency.p99} ms`,
    );
  });
});

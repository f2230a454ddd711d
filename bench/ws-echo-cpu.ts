/**
 * CPU-seconds per 100,000 round trips, raw WebSocket echo, 100 connections, 20,000 msg/s for 5 s:
 * the minimal `ws` client (bench/baseline/ws-echo-client.ts) vs `volley-agent run` with the same
 * load. Target on core 0, client on core 1, median of RUNS runs each, alternating.
 *
 * `all` (default) also runs, in the same rounds, the flow variant (issue 16): the agent with a plan
 * flow whose message is a text frame of JSON from a template (`{ id: "{{ msg.id }}", seq, pad }`,
 * ~64 bytes) and whose reply is matched by `$.id` equal to the message's id, and the minimal
 * client's JSON twin (same JSON, each reply parsed and its id read). `flow.ratioToBinary` is the
 * flow agent's CPU per 100k over the binary agent's (goal ≤ 1.5); `binary` runs only the first two.
 *
 *   node --import tsx bench/ws-echo-cpu.ts [runs=3] [all|binary]
 *
 * CPU window: both report process.cpuUsage() over the run itself (connect + send + last replies),
 * excluding Node/tsx start-up; the agent prints it on its closing stderr line. Whole-process CPU
 * (start-up included, from /usr/bin/time) is reported too.
 */
import { AGENT_NAME, ECHO_CPU_LOAD, echoCpuMedians, echoCpuSummary, medianRoundRatio, runEchoCpu } from "./lib/echo-cpu";
import { startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const MODE = process.argv[3] ?? "all";
if (MODE !== "all" && MODE !== "binary") throw new Error(`mode must be all or binary (got ${MODE})`);
const { conns: CONNS, rate: RATE, seconds: SECONDS } = ECHO_CPU_LOAD;
const BASELINE = "baseline ws client";
const JSON_BASELINE = "baseline ws client, JSON";
const FLOW_AGENT = "volley-agent run, flow";
/** Flow CPU per 100k round trips over the binary echo's: issue 16's bound. */
const FLOW_GOAL = 1.5;

const target = await startTarget();
const planYaml = (flow: boolean) => `name: ws-echo-cpu bench${flow ? " (flow)" : ""}
target: { url: "${target.url}" }
connections: { count: ${CONNS}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${RATE / CONNS}, bytes: 64 }, duration: ${SECONDS}s }
${
  flow
    ? `flow:
  messages:
    - json: { id: "{{ msg.id }}", seq: "{{ msg.seq }}", pad: "${"x".repeat(23)}" }
      reply: { match: { path: "$.id", equals: "{{ msg.id }}" } }
`
    : ""
}`;
const baselineArgs = (mode: string) => ["bench/baseline/ws-echo-client.ts", target.url, String(CONNS), String(RATE), String(SECONDS), mode];
let rows: Awaited<ReturnType<typeof runEchoCpu>>;
try {
  rows = await runEchoCpu({
    runs: RUNS,
    baselineName: BASELINE,
    baselineArgs: baselineArgs("binary"),
    planYaml: planYaml(false),
    extra:
      MODE === "all"
        ? [
            { who: JSON_BASELINE, baselineArgs: baselineArgs("json") },
            { who: FLOW_AGENT, planYaml: planYaml(true) },
          ]
        : [],
  });
} finally {
  await target.stop();
}
const summary = echoCpuSummary(RUNS, BASELINE, rows);
if (MODE === "all") {
  const flowAgent = echoCpuMedians(rows, FLOW_AGENT),
    jsonBase = echoCpuMedians(rows, JSON_BASELINE);
  const ratioToBinary = flowAgent.cpuPer100k / summary.agent.cpuPer100k;
  Object.assign(summary, {
    flow: {
      agent: flowAgent,
      jsonBaseline: jsonBase,
      // The goal: flow agent / binary agent, medians of the same invocation.
      ratioToBinary,
      // The same ratio round by round (each pair ran minutes apart at most), median.
      ratioToBinaryByRound: medianRoundRatio(rows, FLOW_AGENT, AGENT_NAME),
      // How much of the difference is JSON itself: the minimal client's own JSON / binary, and the agent's flow over it.
      jsonBaselineToBinaryBaseline: jsonBase.cpuPer100k / summary.baseline.cpuPer100k,
      ratioToJsonBaseline: flowAgent.cpuPer100k / jsonBase.cpuPer100k,
      goal: FLOW_GOAL,
      goalMet: ratioToBinary <= FLOW_GOAL,
    },
  });
}
console.log(JSON.stringify(summary, null, 2));

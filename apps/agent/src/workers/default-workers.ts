import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/**
 * One engine thread per core this process may use: the cores its affinity allows
 * (availableParallelism, so `taskset -c 1` gives 1), and no more than a cgroup v2 CPU quota allows
 * (cpu.max, rounded up): a container limited to 2 CPUs on a 64-core node runs 2 threads, not 64.
 */
export function defaultWorkers(cpuMax = readCpuMax()): number {
  const cores = availableParallelism();
  const quota = cpuMax ? quotaCores(cpuMax) : undefined;
  return Math.max(1, quota === undefined ? cores : Math.min(cores, quota));
}

/** Cores a cgroup v2 `cpu.max` ("<quota> <period>", or "max <period>") allows, rounded up; undefined when unlimited. */
export function quotaCores(cpuMax: string): number | undefined {
  const [quota, period] = cpuMax.trim().split(/\s+/);
  const q = Number(quota),
    p = Number(period);
  if (quota === "max" || !(q > 0) || !(p > 0)) return undefined;
  return Math.ceil(q / p);
}

function readCpuMax(): string | undefined {
  try {
    return readFileSync("/sys/fs/cgroup/cpu.max", "utf8");
  } catch {
    return undefined; // cgroup v1, no cgroup fs, or not Linux: the affinity's cores stand
  }
}

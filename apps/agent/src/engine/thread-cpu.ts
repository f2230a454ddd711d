import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { isMainThread } from "node:worker_threads";

/** Linux's USER_HZ: /proc reports CPU times in these ticks (100 on every mainstream architecture). */
const TICK_US = 10_000;

/**
 * A clock of the CPU time (µs) the calling thread has used. On the main thread it is the process's,
 * as before; in an engine worker thread process.cpuUsage() would count every thread of the agent
 * (two busy workers would read 200 % each and both look saturated), so a worker reads its own
 * thread: process.threadCpuUsage where Node has it (23.9+), else /proc/thread-self/stat (Linux),
 * else the time its event loop was busy (a close stand-in: a busy loop is a busy thread).
 */
export function threadCpuClock(): () => number {
  if (isMainThread) {
    return () => {
      const u = process.cpuUsage();
      return u.user + u.system;
    };
  }
  const own = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (typeof own === "function") {
    return () => {
      const u = own.call(process);
      return u.user + u.system;
    };
  }
  let last = procThreadCpuUs();
  // A failed read (no descriptor left at a busy moment) repeats the last reading: that interval shows less CPU, never a jump.
  if (last !== undefined) return () => (last = procThreadCpuUs() ?? last!);
  return loopActiveUs;
}

function procThreadCpuUs(): number | undefined {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) * TICK_US : undefined;
  } catch {
    return undefined; // no /proc, or no descriptor left (EMFILE)
  }
}

function loopActiveUs(): number {
  return performance.eventLoopUtilization().active * 1000;
}

/**
 * A clock of the time (µs) the calling thread has spent ready to run but waiting for a CPU (the
 * kernel's run-queue delay, /proc/thread-self/schedstat): on a machine whose cores are taken by
 * other processes, the time a woken engine thread waits before it can read the replies that woke
 * it, which its event loop counts as idle. Undefined where Linux's schedstat is not there, or when
 * it cannot be read (no descriptor left): that interval has no reading.
 */
export function threadWaitClock(): () => number | undefined {
  return () => {
    try {
      const ns = Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[1]);
      return Number.isFinite(ns) ? ns / 1000 : undefined;
    } catch {
      return undefined;
    }
  };
}

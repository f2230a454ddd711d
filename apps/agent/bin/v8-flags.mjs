// V8 settings for the agent process, imported by its bin before anything else loads (the packed
// agent's bin imports this file too): set any later and the bundle's own growth has already armed them.
import { setFlagsFromString } from "node:v8";

// V8's memory reducer for small heaps arms when the main heap grows by 1 MB before its first full
// collection, and then runs full collections on the main thread ~8 s after start (a 15 ms pause plus
// tens of ms of marking steps), on the core the engine's timing threads share when the agent is
// pinned or the machine is busy: part of a standalone run's send-lag tail. Set here, none ran in 5 of
// 5 runs of the compiled bundle (3 of 3 without). It does not stop V8's ordinary reducer, which a
// natural full collection can still start (bench/RESULTS.md, Session 23). A heap that grows is
// still collected as usual.
setFlagsFromString("--no-memory-reducer-for-small-heaps");

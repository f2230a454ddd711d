// V8 settings for the agent process, imported by its bin before anything else loads (the packed
// agent's bin imports this file too): set any later and the bundle's own growth has already armed them.
import { setFlagsFromString } from "node:v8";

// V8's memory reducer for small heaps runs full collections on the main thread ~8 s and ~17 s after
// start (a 15 ms pause plus tens of ms of marking steps), on the core the engine's timing threads
// share when the agent is pinned or the machine is busy: the largest part of a standalone run's
// send-lag tail (bench/RESULTS.md, Sessions 22 and 23). A heap that grows is still collected as usual.
setFlagsFromString("--no-memory-reducer-for-small-heaps");

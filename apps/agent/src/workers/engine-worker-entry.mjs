// An engine worker's entry when the agent runs from its TypeScript sources (npm start, the bin,
// tests): worker threads do not inherit the main thread's module hooks, so each registers tsx
// itself, as bin/volley-agent.js does. The packed agent starts its workers from its one bundled
// file instead (see engine-workers.ts).
import { register } from "tsx/esm/api";

register();
const { serveEngineWorker } = await import("./engine-worker.ts");
serveEngineWorker();

import { homedir, hostname } from "node:os";
import path from "node:path";
import { z } from "zod";
import { loadEnvOrExit, logLevelSchema } from "@volley/contracts";
import { parseSourceAddresses } from "./engine/source-addresses";
import { defaultWorkers } from "./workers/default-workers";

const envSchema = z
  .object({
    HUB_URL: z
      .url({ protocol: /^https?$/, error: "set it to the hub's http(s) URL, e.g. http://127.0.0.1:3001" })
      .default("http://127.0.0.1:3001")
      .transform((u) => u.replace(/\/+$/, "")),
    // A join token (vat_…) from the web UI, or the hub's shared bootstrap AGENT_TOKEN (`npm start`: .volley/agent-token).
    // No default: a token every install knew would admit anyone who reaches the hub. The daemon needs it; `run` does not.
    AGENT_TOKEN: z.string().min(1, "set it to a join token from Agents → Add agent").optional(),
    AGENT_NAME: z.string().min(1).max(200, "use at most 200 characters").default(hostname()),
    AGENT_POOL: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "use lowercase letters, digits and dashes, e.g. default")
      .default("default"),
    AGENT_MAX_CONNECTIONS: z.coerce
      .number({ error: "set it to a whole number of connections, e.g. 50000" })
      .int("set it to a whole number of connections, e.g. 50000")
      .positive("set it to a positive number of connections, e.g. 50000")
      .default(50_000),
    // Local addresses connections bind, round-robin: past ~28K connections to one target each address
    // runs out of ephemeral ports. Unset: the OS picks (one address).
    AGENT_SOURCE_ADDRESSES: z
      .string()
      .transform((text, ctx) => {
        const parsed = parseSourceAddresses(text);
        if (parsed.ok) return parsed.addresses;
        ctx.addIssue({ code: "custom", message: parsed.error });
        return z.NEVER;
      })
      .default([]),
    // Engine worker threads a shard is split across: one per core (affinity, cgroup quota) uses the machine; 0 runs the
    // engine on the main thread beside the hub link, as agents before worker threads did.
    AGENT_WORKERS: z.coerce
      .number({ error: "set it to a whole number of engine threads, e.g. 4 (0: run on the main thread)" })
      .int("set it to a whole number of engine threads, e.g. 4 (0: run on the main thread)")
      .min(0, "set it to 0 or more engine threads, e.g. 4")
      .max(1024, "set it to at most 1024 engine threads; one per core is the useful most")
      .default(defaultWorkers()),
    LOG_LEVEL: logLevelSchema,
    // Where the agent keeps its identity across restarts (one row per agent on the Agents page).
    AGENT_STATE_DIR: z.string().optional(),
    // Set by systemd for a unit with StateDirectory= (the installer's): the default state dir there.
    STATE_DIRECTORY: z.string().optional(),
  })
  .transform(({ STATE_DIRECTORY, ...env }) => ({
    ...env,
    AGENT_STATE_DIR: env.AGENT_STATE_DIR ?? STATE_DIRECTORY?.split(":")[0] ?? path.join(homedir(), ".volley", "agent"),
  }));

export type AgentEnv = z.infer<typeof envSchema>;

/** Reads and validates the environment once; a bad value stops the process with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): AgentEnv {
  return loadEnvOrExit(envSchema, source, (name) => name === "AGENT_TOKEN");
}

import { Queue, type JobsOptions, type ConnectionOptions } from "bullmq";
import type { z } from "zod";

/** A queue job: where it goes, its payload schema and its retry policy. Handlers live with the worker. */
export interface JobDefinition<S extends z.ZodType> {
  name: string;
  schema: S;
  options: JobsOptions;
}

export function defineJob<S extends z.ZodType>(def: JobDefinition<S>): JobDefinition<S> {
  return def;
}

/** Validates the payload before it reaches Redis, so a bad job never sits in a queue. */
export async function enqueue<S extends z.ZodType>(queue: Queue, def: JobDefinition<S>, payload: z.input<S>, opts: JobsOptions = {}) {
  const data = def.schema.parse(payload);
  return queue.add(def.name, data, { ...def.options, ...opts });
}

export function openQueue(name: string, connection: ConnectionOptions): Queue {
  return new Queue(name, { connection });
}

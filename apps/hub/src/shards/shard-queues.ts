import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { QUEUE_NAMES } from "@volley/queue";

/** One BullMQ Queue per pool's shard queue, opened on first use and shared by every run. */
export class ShardQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly connection: Redis) {}

  get(pool: string): Queue {
    let q = this.queues.get(pool);
    if (!q) this.queues.set(pool, (q = new Queue(QUEUE_NAMES.shards(pool), { connection: this.connection })));
    return q;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}

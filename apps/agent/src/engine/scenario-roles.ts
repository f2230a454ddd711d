import type { Scenario } from "@volley/contracts";

/** What each connection of a shard does, by scenario kind; the engine itself never asks for the kind. */
export interface ScenarioRoles {
  /** The room connection `id` joins (broadcast, groups), or undefined for request/response. */
  roomFor(id: number): string | undefined;
  /** The sender gets its own message back and times it as a round trip (echo, http-rps, storm, broadcast with echo). */
  echo: boolean;
  /** Storm: the canary connection's ping rate per second; undefined without a canary. */
  canaryRate: number | undefined;
}

/**
 * `shard` names this shard in group room names (`<room>-<shard>-<group>`), so groups of different
 * shards never share a room: the hub's shard id when the hub runs it, a random one standalone.
 */
export function scenarioRoles(scenario: Scenario, shard: string): ScenarioRoles {
  switch (scenario.kind) {
    case "broadcast":
      return { roomFor: () => scenario.room, echo: scenario.echo, canaryRate: undefined };
    case "groups": {
      const { size, room } = scenario;
      return { roomFor: (id) => `${room}-${shard}-${Math.floor(id / size)}`, echo: false, canaryRate: undefined };
    }
    case "storm":
      return { roomFor: () => undefined, echo: true, canaryRate: scenario.canary === false ? undefined : scenario.canary.rate };
    case "echo":
    case "http-rps":
    case "users":
      // http-rps is echo with the schema's aggregate Poisson defaults: each request's response is its reply.
      return { roomFor: () => undefined, echo: true, canaryRate: undefined };
  }
}

import { io } from "socket.io-client";
import { AGENT_EVENTS, agentEndpoint, clockPingAckSchema, welcomeSchema, type AgentHello } from "@volley/contracts";
import { estimateClockOffset } from "./clock-sync";

/** A clock further off the hub's than this is reported as a problem to fix (NTP), not silently corrected. */
export const MAX_CLOCK_OFFSET_MS = 30_000;

export type HubCheck =
  | { ok: true; agentId: string; offsetMs: number; rttMs: number }
  | { ok: false; problem: "unreachable" | "refused" | "clock"; message: string };

/**
 * One handshake with the hub, as the daemon would make it, then clock pings: what the installer
 * runs before it writes a service, so a wrong token, a hub that does not answer or a clock far off
 * is said in words and nothing is left half-installed.
 */
export async function checkHub(hubUrl: string, hello: AgentHello, timeoutMs = 15_000): Promise<HubCheck> {
  const endpoint = agentEndpoint(hubUrl);
  const socket = io(endpoint.url, {
    path: endpoint.path,
    transports: ["websocket", "polling"],
    tryAllTransports: true,
    auth: hello,
    reconnection: false,
    forceNew: true,
    timeout: timeoutMs,
  });
  try {
    const welcome = await new Promise<{ agentId: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(unreachable(hubUrl, `no answer in ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      socket.on(AGENT_EVENTS.welcome, (payload: unknown) => {
        const w = welcomeSchema.safeParse(payload);
        if (!w.success) return;
        clearTimeout(timer);
        resolve(w.data);
      });
      socket.on("connect_error", (err: Error & { type?: string; description?: unknown }) => {
        clearTimeout(timer);
        // A refusal by the hub's middleware has the hub's own words; anything else is the network's.
        if (!socket.active && err.type !== "TransportError")
          reject({ ok: false, problem: "refused", message: `the hub refused this agent: ${err.message}` } satisfies HubCheck);
        else reject(unreachable(hubUrl, describeTransportError(err)));
      });
    });
    const estimate = await estimateClockOffset(async () => {
      const answer: unknown = await socket.timeout(2000).emitWithAck(AGENT_EVENTS.clockPing);
      return clockPingAckSchema.parse(answer).hubTime;
    }, 4);
    if (!estimate) return unreachable(hubUrl, "it accepted the agent but answered no clock ping");
    if (Math.abs(estimate.offsetMs) > MAX_CLOCK_OFFSET_MS) {
      const s = (Math.abs(estimate.offsetMs) / 1000).toFixed(1);
      return {
        ok: false,
        problem: "clock",
        message: `this host's clock is ${s} s ${estimate.offsetMs > 0 ? "behind" : "ahead of"} the hub's (more than ${MAX_CLOCK_OFFSET_MS / 1000} s): run time synchronisation (timedatectl set-ntp true, or chrony) and try again`,
      };
    }
    return { ok: true, agentId: welcome.agentId, offsetMs: estimate.offsetMs, rttMs: estimate.rttMs };
  } catch (err) {
    if (typeof err === "object" && err !== null && "problem" in err) return err as HubCheck;
    return unreachable(hubUrl, err instanceof Error ? err.message : String(err));
  } finally {
    socket.disconnect();
  }
}

function unreachable(hubUrl: string, why: string): HubCheck {
  return {
    ok: false,
    problem: "unreachable",
    message: `the hub at ${hubUrl} did not answer (${why}): check the URL (copy the line again from Agents → Add agent) and that this host reaches it`,
  };
}

/** socket.io-client's transport errors say "websocket error"; the cause underneath (ECONNREFUSED, a DNS failure) is what helps. */
function describeTransportError(err: Error & { description?: unknown }): string {
  const d = err.description as { message?: string; error?: { message?: string; code?: string } } | undefined;
  const inner = d?.error?.code ?? d?.error?.message ?? d?.message;
  return inner ? `${err.message}: ${inner}` : err.message;
}

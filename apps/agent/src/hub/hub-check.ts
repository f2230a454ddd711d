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
      socket.on("connect_error", (err: Error & { type?: string }) => {
        clearTimeout(timer);
        // A refusal by the hub's middleware has the hub's own words; anything else is the network's.
        if (!socket.active && err.type !== "TransportError")
          reject({ ok: false, problem: "refused", message: `the hub refused this agent: ${err.message}` } satisfies HubCheck);
        else void networkCause(hubUrl, err.message).then((why) => reject(unreachable(hubUrl, why)));
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

/**
 * socket.io-client's transport errors say only "xhr poll error"; what helps is the cause underneath
 * (connection refused, a name that does not resolve, an HTTP status from something that is not the
 * hub), which one plain request to the same URL tells.
 */
async function networkCause(hubUrl: string, fallback: string): Promise<string> {
  try {
    const res = await fetch(`${hubUrl.replace(/\/+$/, "")}/socket.io/?EIO=4&transport=polling`, { signal: AbortSignal.timeout(5000) });
    // Web's relay answers this when its own hub is down: the address is right, the install is not up.
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    if (body?.error?.code === "hub_unavailable") return `Volley web answered, but ${body.error.message ?? "its hub did not"}`;
    return `HTTP ${res.status} from ${new URL(hubUrl).host}: not a Volley hub there?`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const code = cause?.code ?? (err as Error).name;
    const words: Record<string, string> = {
      ECONNREFUSED: "connection refused",
      ENOTFOUND: "the host name does not resolve",
      EAI_AGAIN: "the host name does not resolve",
      EHOSTUNREACH: "no route to the host",
      ENETUNREACH: "no route to the host",
      TimeoutError: "no answer in 5 s",
      ECONNRESET: "the connection was reset",
    };
    return words[code] ? `${words[code]}, ${code}` : (cause?.message ?? fallback);
  }
}

import { Agent as HttpAgent, type AgentOptions, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { redirectDetail } from "./http-common";

/** Raised on a request whose answer was a redirect the agent refused to follow. */
export class RedirectRefusedError extends Error {
  readonly code = "VOLLEY_REDIRECT_REFUSED";
}

export type NoRedirectAgent = (HttpAgent | HttpsAgent) & { refusedRedirect?: string };

/**
 * A keep-alive agent whose requests end with an error on a redirect answer. socket.io-client's Node
 * XHR (xmlhttprequest-ssl) follows 302/303/307 by itself, with a fresh http.request that bypasses
 * this agent and sends the plan's headers to wherever Location points; the load would then reach
 * a host the target policy never checked. Taking over the request's response listeners is the one
 * place both client generations (socket.io-client 4 and 2) can be stopped; the refusal is kept on
 * the agent so the driver can report it with its Location.
 */
export function noRedirectAgent(url: string, options: AgentOptions): NoRedirectAgent {
  const agent: NoRedirectAgent = url.startsWith("https:") ? new HttpsAgent(options) : new HttpAgent(options);
  const base = (agent as unknown as { addRequest: (req: ClientRequest, opts: unknown) => void }).addRequest.bind(agent);
  (agent as unknown as { addRequest: (req: ClientRequest, opts: unknown) => void }).addRequest = (req, opts) => {
    const listeners = req.listeners("response") as ((res: IncomingMessage) => void)[];
    req.removeAllListeners("response");
    req.on("response", (res: IncomingMessage) => {
      const detail = redirectDetail(res.statusCode ?? 0, res.headers.location);
      if (detail) {
        agent.refusedRedirect = detail;
        res.resume();
        req.destroy(new RedirectRefusedError(detail));
        return;
      }
      for (const listener of listeners) listener.call(req, res);
    });
    base(req, opts);
  };
  return agent;
}

import { z } from "zod";

/** Hosted mode's target ownership proof: the API shapes of /api/v1/targets and the audit log. */

const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "give a DNS host name without scheme or port, like api.example.com");

export const addTargetHostBodySchema = z.strictObject({ host: hostName });
export type AddTargetHostBody = z.infer<typeof addTargetHostBodySchema>;

export const targetHostSchema = z.object({
  id: z.string(),
  host: z.string(),
  /** Serve it as the body of http(s)://<host>/.well-known/volley-verify/<token>, or publish TXT `volley-verify=<token>` on the host. */
  token: z.string(),
  verified: z.boolean(),
  verifiedAt: z.string().nullable(),
  method: z.enum(["http", "dns"]).nullable(),
  /** Where to put the token, spelled out. */
  instructions: z.object({ http: z.string(), dns: z.string() }),
  createdAt: z.string(),
});
export type TargetHost = z.infer<typeof targetHostSchema>;

export const auditEventSchema = z.object({
  id: z.number().int(),
  actor: z.string(),
  action: z.string(),
  runId: z.string().nullable(),
  targetHost: z.string().nullable(),
  addresses: z.array(z.string()).nullable(),
  at: z.string(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { Status } from "./openapi";

/** Target ownership (hosted mode) and the audit log, for the OpenAPI document (openapi.ts names the schemas). */

type Content = { description: string; content: { "application/json": { schema: z.ZodType } } };

export function targetPaths(c: {
  TargetHost: z.ZodType;
  AddTargetHostBody: z.ZodType;
  AuditEvent: z.ZodType;
  jsonBody: (schema: z.ZodType, description: string) => Content;
  errors: (...statuses: Status[]) => Record<string, Content>;
  noContent: (description: string) => { description: string };
  sessionOnly: Record<string, string[]>[];
}): RouteConfig[] {
  const { TargetHost, AddTargetHostBody, AuditEvent, jsonBody, errors, noContent, sessionOnly } = c;
  const params = z.object({ id: z.string().describe("The target id (`tgt_…`).") });
  return [
    {
      method: "post",
      path: "/api/v1/targets",
      operationId: "addTarget",
      tags: ["targets"],
      summary: "Add a target host to verify (hosted mode runs only against hosts their owner verified)",
      description:
        "Returns a token. Prove you own the host by serving the token as the body of `https://<host>/.well-known/volley-verify/<token>` (or http://), or by publishing a TXT record `volley-verify=<token>` on the host, then call `/verify`. The proof is re-checked before every run. Adding the same host again returns its existing record. Needs a session of an org admin or owner.",
      security: sessionOnly,
      request: { body: { required: true, content: { "application/json": { schema: AddTargetHostBody } } } },
      responses: { 201: jsonBody(TargetHost, "The host, its token and where to put it."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/targets",
      operationId: "listTargets",
      tags: ["targets"],
      summary: "List the organization's target hosts and whether each is verified",
      responses: { 200: jsonBody(z.object({ targets: z.array(TargetHost) }), "The hosts."), ...errors(500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/targets/{id}/verify",
      operationId: "verifyTarget",
      tags: ["targets"],
      summary: "Check the ownership proof now",
      description: "In hosted mode the host must resolve to public addresses only. `verified` says whether the token was found (and how, in `method`).",
      security: sessionOnly,
      request: { params },
      responses: { 200: jsonBody(TargetHost, "The host after the check."), ...errors(404, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/targets/{id}",
      operationId: "deleteTarget",
      tags: ["targets"],
      summary: "Forget a target host; hosted runs against it are refused again",
      security: sessionOnly,
      request: { params },
      responses: { 204: noContent("Deleted."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/audit",
      operationId: "listAudit",
      tags: ["audit"],
      summary: "The audit log: who started which run against which host (and what it resolved to), newest first",
      security: sessionOnly,
      request: { query: z.object({ limit: z.coerce.number().int().min(1).max(500).optional(), offset: z.coerce.number().int().min(0).optional() }) },
      responses: { 200: jsonBody(z.object({ events: z.array(AuditEvent) }), "The events."), ...errors(400, 500, 503) },
    },
  ];
}

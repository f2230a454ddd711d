import type { MetricsExport, PutMetricsExportBody } from "@volley/contracts";
import { deleteMetricsExport, getMetricsExport, putMetricsExport } from "@volley/db";
import { secretsKeys, volleyMode } from "@/env";
import { notFound } from "../http/errors";
import { logOnce } from "../http/log";
import { getDb } from "../http/services";
import { assertPublicAddresses, resolveTarget, targetHost } from "@volley/admission";

/** An org's live run-metrics export (Prometheus remote-write): set, shown without its Authorization header, removed. */

export async function orgMetricsExport(orgId: string): Promise<MetricsExport | null> {
  return getMetricsExport(getDb(), orgId);
}

export async function setOrgMetricsExport(orgId: string, body: PutMetricsExportBody): Promise<MetricsExport> {
  // Hosted: the export must not make the hub call into a private network on a user's behalf (checked again at each push).
  if (volleyMode() === "hosted") {
    const host = targetHost(body.url);
    assertPublicAddresses(host, await resolveTarget(host, undefined, "url"), "url");
  }
  const keys = secretsKeys();
  if (!keys && body.authorization)
    logOnce(
      "secrets-key-unset",
      "VOLLEY_SECRETS_KEY is not set; the metrics export's Authorization header is stored unencrypted — set it (openssl rand -base64 32) for web and hub",
    );
  return putMetricsExport(getDb(), orgId, body, keys);
}

export async function removeOrgMetricsExport(orgId: string): Promise<void> {
  if (!(await deleteMetricsExport(getDb(), orgId))) throw notFound("metrics export");
}

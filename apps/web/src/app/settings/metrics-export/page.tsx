import type { Metadata } from "next";
import { ErrorPanel } from "../../../components/error-panel";
import { MetricsExportForm } from "../../../components/metrics-export-form";
import { authorize } from "@/server/auth/auth";
import { ApiError } from "@/server/http/errors";
import { pageSession } from "@/server/http/page-session";
import { orgMetricsExport } from "@/server/metrics-export/metrics-export";

export const metadata: Metadata = { title: "Metrics export" };

export default async function MetricsExportPage() {
  const auth = await pageSession();
  try {
    authorize(auth, "org:admin");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return <ErrorPanel title="Only admins manage the metrics export" message={`${err.message}. Ask an owner or admin of your organization.`} />;
  }
  const current = await orgMetricsExport(auth.orgId);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Settings → Metrics export</h1>
          <p className="muted">
            Every second of every run of this organization is pushed to your Prometheus (or any remote-write receiver: Grafana Cloud, Mimir, VictoriaMetrics,
            Thanos) as <code className="mono">volley_run_*</code> series labelled with <code className="mono">run_id</code>. Import{" "}
            <code className="mono">infra/grafana/volley-run.json</code> into Grafana to see a run as its run page shows it.
          </p>
        </div>
      </div>
      <MetricsExportForm initial={current} />
    </>
  );
}

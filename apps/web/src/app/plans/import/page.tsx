import type { Metadata } from "next";
import Link from "next/link";
import { PlanImport } from "../../../components/plan-import";
import { pageSession } from "@/server/http/page-session";

export const metadata: Metadata = { title: "Import a plan" };

export default async function ImportPlanPage() {
  await pageSession();
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Import a plan</h1>
          <p className="muted">
            Turn a browser session saved as HAR (its log-in, WebSocket handshake and messages) or an Artillery script into a plan with a flow, then pick the
            load and run it. <Link href="/plans">All plans and templates</Link>
          </p>
        </div>
      </div>
      <PlanImport />
    </>
  );
}

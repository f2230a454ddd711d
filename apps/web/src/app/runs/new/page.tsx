import { EXAMPLE_PLAN_YAML } from "@volley/contracts";
import type { Metadata } from "next";
import { PlanEditor } from "../../../components/plan-editor";
import { pageSession } from "@/server/http/page-session";

export const metadata: Metadata = { title: "New run" };

export default async function NewRunPage() {
  await pageSession(); // runs are queued through the API with the session cookie, in the member's org
  return (
    <>
      <div className="page-head">
        <div>
          <h1>New run</h1>
          <p className="muted">Write the test plan in YAML (or JSON). It is checked as you type; Run queues it for a hub.</p>
        </div>
      </div>
      <PlanEditor initialText={EXAMPLE_PLAN_YAML} />
    </>
  );
}

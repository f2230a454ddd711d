import { EXAMPLE_PLAN_YAML, TEMPLATES } from "@volley/contracts";
import type { Metadata } from "next";
import Link from "next/link";
import { PlanEditor } from "../../../components/plan-editor";
import { pageSession } from "@/server/http/page-session";

export const metadata: Metadata = { title: "New plan" };

export default async function NewPlanPage({ searchParams }: { searchParams: Promise<{ template?: string }> }) {
  await pageSession();
  const { template: id } = await searchParams;
  const template = TEMPLATES.find((t) => t.id === id);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>{template ? template.title : "New plan"}</h1>
          <p className="muted">
            {template ? template.description : "Write the plan in YAML, or change the common fields beside it."} Save it to keep its versions, or run it as it
            is. <Link href="/plans">All templates</Link>
          </p>
        </div>
      </div>
      <PlanEditor initialText={template?.yaml ?? EXAMPLE_PLAN_YAML} canSave />
    </>
  );
}

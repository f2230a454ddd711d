import type { Metadata } from "next";
import { ErrorPanel } from "../../../components/error-panel";
import { WebhooksManager } from "../../../components/webhooks-manager";
import { authorize } from "@/server/auth/auth";
import { ApiError } from "@/server/http/errors";
import { pageSession } from "@/server/http/page-session";
import { listOrgWebhooks } from "@/server/webhooks/webhooks";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage() {
  const auth = await pageSession();
  try {
    authorize(auth, "org:admin");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return <ErrorPanel title="Only admins manage webhooks" message={`${err.message}. Ask an owner or admin of your organization.`} />;
  }
  const webhooks = await listOrgWebhooks(auth.orgId);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Settings → Webhooks</h1>
          <p className="muted">
            Tell your CI, chat or incident tooling when a run ends: Volley&apos;s JSON document for your own receiver, or a message a Slack (or
            Slack-compatible) incoming webhook posts as is.
          </p>
        </div>
      </div>
      <WebhooksManager initialWebhooks={webhooks} />
    </>
  );
}

import type { Metadata } from "next";
import { ErrorPanel } from "../../../components/error-panel";
import { TokensManager } from "../../../components/tokens-manager";
import { authorize } from "@/server/auth/auth";
import { ApiError } from "@/server/http/errors";
import { pageSession } from "@/server/http/page-session";
import { listTokens } from "@/server/tokens/tokens";

export const metadata: Metadata = { title: "API tokens" };

export default async function TokensPage() {
  const auth = await pageSession();
  try {
    authorize(auth, "org:admin");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return <ErrorPanel title="Only admins manage API tokens" message={`${err.message}. Ask an owner or admin of your organization for a token.`} />;
  }
  const tokens = await listTokens(auth.orgId);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Settings → API tokens</h1>
          <p className="muted">
            Tokens let CI and the <code className="mono">volley</code> CLI use the API as this organization: send{" "}
            <code className="mono">Authorization: Bearer &lt;token&gt;</code> or set <code className="mono">VOLLEY_TOKEN</code>. Scope{" "}
            <code className="mono">read</code> reads runs and plans; <code className="mono">run</code> starts and stops runs and saves plans.
          </p>
        </div>
      </div>
      <TokensManager initialTokens={tokens} />
    </>
  );
}

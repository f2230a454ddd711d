import type { Metadata } from "next";
import { referenceOperations, referenceSchemas } from "@/server/openapi/openapi-reference";
import { InlineCodeText } from "@/components/inline-code-text";

export const metadata: Metadata = { title: "API reference" };
// The document depends only on the code, so the page is rendered once at build time.
export const dynamic = "force-static";

const anchor = (name: string) => `schema-${name}`;

/** A schema name, linked to its definition below when it is a named component. */
function SchemaRef({ name, known }: { name: string | null; known: Set<string> }) {
  if (!name) return <span className="subtle">—</span>;
  return <code className="mono">{known.has(name) ? <a href={`#${anchor(name)}`}>{name}</a> : name}</code>;
}

/** Descriptions are CommonMark (as OpenAPI specifies); the only markup they use is `code`. */
export default function ApiDocsPage() {
  const operations = referenceOperations();
  const schemas = referenceSchemas();
  const known = new Set(schemas.map((s) => s.name));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>API reference</h1>
          <p className="muted">
            REST API <code className="mono">/api/v1</code>. Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1). Every error
            is <code className="mono">{"{ error: { code, message } }"}</code>.
          </p>
        </div>
      </div>
      {operations.map((op) => (
        <section key={`${op.method} ${op.path}`} className="panel" id={op.operationId} style={{ marginBottom: 12 }}>
          <h2>
            <span className="chip mono">{op.method}</span> <code className="mono">{op.path}</code> <span className="muted">— {op.summary}</span>
          </h2>
          {op.description && (
            <p className="muted small">
              <InlineCodeText text={op.description} />
            </p>
          )}
          <table className="table">
            <tbody>
              {op.parameters.map((p) => (
                <tr key={`${p.in}:${p.name}`}>
                  <th>{p.in} parameter</th>
                  <td>
                    <code className="mono">{p.name}</code>
                    {p.required ? "" : " (optional)"}{" "}
                    {p.description && (
                      <span className="muted">
                        <InlineCodeText text={p.description} />
                      </span>
                    )}
                  </td>
                </tr>
              ))}
              {op.requestBody && (
                <tr>
                  <th>request body</th>
                  <td>
                    <SchemaRef name={op.requestBody} known={known} />
                  </td>
                </tr>
              )}
              {op.responses.map((r) => (
                <tr key={r.status}>
                  <th>{r.status}</th>
                  <td>
                    <SchemaRef name={r.schema} known={known} />{" "}
                    <span className="muted small">
                      <InlineCodeText text={r.description} />
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
      <h2 style={{ margin: "20px 0 8px" }}>Schemas</h2>
      {schemas.map((s) => (
        <details key={s.name} id={anchor(s.name)} className="panel" style={{ marginBottom: 8 }}>
          <summary>
            <code className="mono">{s.name}</code>
          </summary>
          <pre className="code-block">{s.json}</pre>
        </details>
      ))}
    </>
  );
}

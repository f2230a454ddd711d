// The builder lives in contracts so the REST API serves the same report (GET /api/v1/runs/{id}/junit.xml).
export { escapeXml, runToJunit } from "@volley/contracts";

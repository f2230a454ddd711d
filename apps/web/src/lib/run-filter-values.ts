/** The run-list filters as the API takes them (GET /api/v1/runs query): empty strings mean "any". */
export interface RunFilterValues {
  q: string;
  planId: string;
  status: string;
  tag: string;
  from: string;
  to: string;
}

export const NO_FILTERS: RunFilterValues = { q: "", planId: "", status: "", tag: "", from: "", to: "" };

/** The filters as query parameters, leaving out the empty ones. */
export function filterParams(f: RunFilterValues): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  return p;
}

export function filtersFrom(params: Record<string, string | undefined>): RunFilterValues {
  return { q: params.q ?? "", planId: params.planId ?? "", status: params.status ?? "", tag: params.tag ?? "", from: params.from ?? "", to: params.to ?? "" };
}

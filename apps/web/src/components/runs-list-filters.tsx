"use client";

import { useRouter } from "next/navigation";
import { filterParams, type RunFilterValues } from "../lib/run-filter-values";
import { RunFilters } from "./run-filters";

/** The runs page's filters: applying them reloads the page with them in its address (shareable, back-button friendly). */
export function RunsListFilters({ value, plans }: { value: RunFilterValues; plans: { id: string; name: string }[] }) {
  const router = useRouter();
  return <RunFilters value={value} plans={plans} action="/" onApply={(f) => router.push(`/?${filterParams(f).toString()}`)} />;
}

import { z } from "zod";

const isJson = (v: unknown, depth = 0): boolean => {
  if (depth > 32) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isJson(x, depth + 1));
  if (typeof v === "object") return Object.getPrototypeOf(v) === Object.prototype && Object.values(v).every((x) => isJson(x, depth + 1));
  return false;
};
/**
 * A JSON value whose strings may hold {{ variables }}. Not z.json(): its recursive schema sends the
 * OpenAPI and JSON Schema generators into endless recursion; here it is any value, checked as JSON.
 */
export const jsonTemplate = z
  .unknown()
  .refine((v) => v === undefined || isJson(v), "must be a JSON value (object, array, string, number, true/false or null), at most 32 levels deep");

import { API_ERROR_CODES, type ApiErrorStatus, type FieldIssue } from "@volley/contracts";

type RefusalCode = "target_refused" | "target_unverified" | "quota_exceeded" | "invalid_body";

/**
 * Why a plan may not run (target policy, ownership, quotas), with the API error code web answers
 * with (its error mapping turns this into the response) and a message fit to show: the hub records
 * it on a schedule whose firing was refused.
 */
export class AdmissionRefusal extends Error {
  readonly status: ApiErrorStatus<RefusalCode>;
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly issues?: FieldIssue[],
  ) {
    super(message);
    this.name = "AdmissionRefusal";
    this.status = API_ERROR_CODES[code].status;
  }
}

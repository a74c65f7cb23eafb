// The subscription API's error vocabulary on the wire: status and the uppercase code the protocol names
// (`{"error": {"code": "FENCED", "message": "..."}}`). Exhaustive by type, like src/http/error-table.ts is
// for stream routes. ALREADY_CLAIMED also carries `current_holder` and `generation`, which clients read.
import type { SubscriptionError, SubscriptionErrorCode } from "../core/subscriptions/errors.ts";

interface SubscriptionErrorWire {
  readonly status: number;
  /** The protocol's code, as clients match it. */
  readonly code: string;
}

const SUBSCRIPTION_ERROR_WIRE: { readonly [C in SubscriptionErrorCode]: SubscriptionErrorWire } = {
  invalid: { status: 400, code: "INVALID_REQUEST" },
  webhook_url_rejected: { status: 400, code: "WEBHOOK_URL_REJECTED" },
  not_found: { status: 404, code: "SUBSCRIPTION_NOT_FOUND" },
  conflict: { status: 409, code: "SUBSCRIPTION_ALREADY_EXISTS" },
  unauthorized: { status: 401, code: "TOKEN_INVALID" },
  stale_wake: { status: 409, code: "FENCED" },
  already_claimed: { status: 409, code: "ALREADY_CLAIMED" },
  no_pending_work: { status: 409, code: "NO_PENDING_WORK" },
  ack_rejected: { status: 409, code: "INVALID_OFFSET" },
  // Not named by the protocol (it has no bounds yet): the HTTP statuses say it, the codes follow its style.
  too_large: { status: 413, code: "PAYLOAD_TOO_LARGE" },
  limit_reached: { status: 429, code: "LIMIT_REACHED" },
};

/** Status, headers and JSON body for a subscription rejection. */
export function subscriptionErrorResponse(error: SubscriptionError): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const wire = SUBSCRIPTION_ERROR_WIRE[error.code];
  const d = error.details ?? {};
  const bound = error.code === "too_large" || error.code === "limit_reached";
  const extra =
    error.code === "already_claimed"
      ? { current_holder: d["currentHolder"], generation: d["generation"] }
      : bound
        ? { limit: d["limit"], max: d["max"] }
        : {};
  const body = JSON.stringify({ error: { code: wire.code, message: error.message, ...extra } });
  // A full bound frees when something is deleted: worth retrying later, like the stream routes' 429.
  const headers: Record<string, string> = error.code === "limit_reached" ? { "retry-after": "1" } : {};
  return { status: wire.status, headers, body };
}

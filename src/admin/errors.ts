// What the account service and the store throw, as the admin API answers it: a bad field
// 400 naming it, an unknown resource 404, a refused change 409, an unreachable store 503.
// Anything else is a 500 whose detail goes to the log, never to the caller.

import { InvalidField } from "../accounts/money-input.js";
import { IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict } from "../accounts/store.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { errorText, log } from "../observability/log.js";
import { StateUnavailable } from "../state/open.js";

/** The answer for an error a handler threw. */
export function adminErrorOf(err: unknown, requestId: string): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof InvalidField) return new GatewayError(errors.invalidParameter, err.message);
  if (err instanceof NotFound) return new GatewayError(errors.notFound, `${capitalised(err.message)}.`);
  if (err instanceof NameTaken) return new GatewayError(errors.nameTaken, `${capitalised(err.message)}: choose another name.`);
  if (err instanceof VersionConflict) return new GatewayError(errors.versionConflict, `${capitalised(err.message)}.`);
  if (err instanceof IdempotencyMismatch) return new GatewayError(errors.idempotencyMismatch, `${capitalised(err.message)}.`);
  if (err instanceof KeyTaken) return new GatewayError(errors.keyTaken);
  if (err instanceof StateUnavailable) {
    return new GatewayError(errors.stateUnavailable, "The accounts store is unavailable; nothing was changed. Retry shortly.", { headers: { "retry-after": "2" } });
  }
  log.error("admin request failed", { requestId, error: errorText(err) });
  return new GatewayError(errors.internal, "Internal gateway error: the request id names it in the gateway's log.");
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// Fail closed: a billed request whose accounts, rate windows or usage log cannot be reached
// (Redis or PostgreSQL lost while serving) gets a 503 naming what is unavailable, never an
// unbilled answer. Refusals the state itself decides (quota used up, 402) pass through.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";

/** What could not be reached, as the client is told. */
export type StatePart = "accounts" | "rate limits" | "usage log" | "job records" | "stored responses";

/** Seconds a client waits before retrying: the clients reconnect within about a second. */
const RETRY_AFTER_S = 2;

/** The error to answer with when a state call rejected: its own GatewayError, else a 503.
 * Not logged per request: an outage would flood the log; /healthz and the state say it. */
export function stateFailure(err: unknown, part: StatePart): GatewayError {
  return err instanceof GatewayError ? err : stateUnavailable(part);
}

/** The 503 for an unreachable `part` (Retry-After set). */
export function stateUnavailable(part: StatePart): GatewayError {
  const where = part === "usage log" ? "usage log" : `${part} store`;
  return new GatewayError(errors.stateUnavailable,
    `The gateway's ${where} is unavailable, so this request could not be billed and was not served. Retry shortly.`,
    { headers: { "retry-after": String(RETRY_AFTER_S) } });
}

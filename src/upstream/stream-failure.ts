// The error a client's stream ends with when the upstream's did not end properly: one
// wording per way it can break, rendered by each protocol in its own stream shape.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Ending } from "./served.js";

/** The error for a stream that ended `ending` (anything but complete, client-gone or an
 * error the upstream reported itself). */
export function streamFailure(ending: Ending, idleTimeoutMs: number): GatewayError {
  switch (ending) {
    case "upstream-idle":
      return new GatewayError(errors.upstreamTimeout,
        `The upstream provider sent nothing for ${Math.round(idleTimeoutMs / 1000)} s; the stream was ended. What was delivered is billed as an estimate.`);
    case "upstream-cut":
      return new GatewayError(errors.upstreamError, "The upstream connection broke mid-stream. What was delivered is billed as an estimate.");
    case "undecodable":
      return new GatewayError(errors.upstreamError, "The upstream provider sent a stream event that does not decode; the stream was ended. What was delivered is billed as an estimate.");
    case "oversized-event":
      return new GatewayError(errors.upstreamError, "The upstream provider sent a stream event larger than the gateway's limit (server.max_event_size); the stream was ended. What was delivered is billed as an estimate.");
    case "internal-error":
      return new GatewayError(errors.internal, "Internal gateway error while relaying the stream. What was delivered is billed as an estimate.");
    default:
      return new GatewayError(errors.upstreamError, "The upstream stream ended before the answer was complete. What was delivered is billed as an estimate.");
  }
}

// A thrown error as the answer a customer gets: the admin API's mapping (a bad field 400
// naming it, an unknown resource 404, a refused change 409, an unreachable store 503, else
// a 500 whose detail goes to the log only), in the same JSON shape the admin API and the
// OpenAI-protocol endpoints answer with.

import { renderError } from "../../../protocols/render-error.js";
import { adminErrorOf } from "../../errors.js";

/** The body and status of an error, Retry-After and the like kept. */
export function answerOf(err: unknown, requestId: string | undefined): { status: number; body: unknown; headers?: Readonly<Record<string, string>> } {
  const e = adminErrorOf(err, requestId ?? "-");
  return { status: e.status, body: JSON.parse(renderError("openai", e)) as unknown, ...(e.headers === undefined ? {} : { headers: e.headers }) };
}

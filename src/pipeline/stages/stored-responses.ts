// Stored responses stay with the user who created them: a request naming one
// (previous_response_id) gets 404 unless its caller's user created it through this gateway;
// `store` goes upstream as false unless the model allows storing; and a stored answer's id
// is recorded for its creator before the answer's last bytes go (so the next turn finds it).
// The rules themselves are the protocol's (protocols/openai/responses-state.ts).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { responsesState, STORE_FALSE } from "../../protocols/openai/responses-state.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { give, type Has, type Needs, type Stage } from "../context.js";
import { stateFailure } from "../state-failure.js";

type In = Needs<"caller" | "call">;

/** The stored-responses phase (/v1/responses). */
export function storedResponsesStage(routing: RoutingState): Stage<In, Has<"edits">> {
  return async (ctx, next) => {
    const state = responsesState(ctx.call.json, ctx.call.model);
    const user = ctx.caller.user;
    if (state.previous !== undefined) {
      const creator = await routing.responses.creator(state.previous).catch((err: unknown) => {
        throw stateFailure(err, "stored responses");
      });
      // Another user's response is as unknown as one that never was: ids do not leak.
      if (creator !== user) {
        throw new GatewayError(errors.notFound,
          `No stored response '${state.previous}' was created through this gateway by this account (or it expired).`);
      }
    }
    // The body stays as received (estimates and the usage log read it); the pass-through adds
    // the member upstream with its other edits.
    await next(give(ctx, "edits", { members: state.addStoreFalse ? STORE_FALSE : undefined }));
    const served = ctx.outcome?.served;
    if (!state.stored || served?.answerId === undefined || served.status >= 300) return;
    try {
      await routing.responses.remember(served.answerId, user);
    } catch (err) {
      // The answer is paid for and goes out; only naming it later will fail (404).
      log.warn("stored response not recorded", { requestId: ctx.id, error: String(err) });
    }
  };
}

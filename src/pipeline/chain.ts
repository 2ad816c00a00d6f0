// The middleware chain, in the one order DESIGN.md states. Common stages first, then the
// route's handler stages; composed once per handler at startup so a request only looks up.

import type { UsageSink } from "../billing/usage-sink.js";
import type { RequestLog } from "../observability/request-log.js";
import type { JobOutcomes } from "../routing/job-outcomes.js";
import type { RoutingState } from "../routing/routing-state.js";
import type { BodyBudget } from "./body-budget.js";
import type { HandlerName } from "./routes.js";
import type { Runtime } from "../runtime/types.js";
import type { Accounts, Admitter, Limiter, UsageLog } from "../state/interfaces.js";
import { compose, type Stage } from "./compose.js";
import type { RequestContext } from "./context.js";
import { accessStage } from "./stages/access.js";
import { authStage } from "./stages/auth.js";
import { billingDashboardStage } from "./stages/billing-dashboard.js";
import { bodyStage } from "./stages/body.js";
import { countTokensStage } from "./stages/count-tokens.js";
import { anthropicVersionStage } from "./stages/anthropic-version.js";
import { limitsStage } from "./stages/limits.js";
import { logStage } from "./stages/log.js";
import { modelStage } from "./stages/model.js";
import { multipartBodyStage } from "./stages/multipart-body.js";
import { jobStage } from "./stages/job.js";
import { jobAccessStage } from "./stages/job-access.js";
import { realtimeModelStage, realtimeStage } from "./stages/realtime.js";
import { uploadBodyStage } from "./stages/upload-body.js";
import { modelsStage } from "./stages/models.js";
import { reserveStage } from "./stages/reserve.js";
import { routeStage } from "./stages/route.js";
import { rulesStage } from "./stages/rules.js";
import { settleStage } from "./stages/settle.js";
import { storedResponsesStage } from "./stages/stored-responses.js";
import { upstreamStage } from "./stages/upstream.js";

/** Handlers whose chain includes the reserve stage. */
const reserving: ReadonlySet<HandlerName> = new Set(["proxy", "multipart", "upload", "realtime", "messages", "responses"]);

export interface ChainDeps {
  /** Told about every settled request (after billing, before its last bytes go). */
  readonly usage: UsageSink;
  readonly accounts: Accounts;
  readonly usageLog: UsageLog;
  readonly limiter: Limiter;
  /** Rate windows and the pre-deduction together (the reserve stage). */
  readonly admitter: Admitter;
  /** Session affinity, channel health and job ownership (the keyed store). */
  readonly routing: RoutingState;
  /** Memory all request bodies in flight may hold together (server.max_body_memory). */
  readonly bodyBudget: BodyBudget;
  /** Acts on the job statuses client polls relay (a failed job's charge is refunded). */
  readonly jobs: JobOutcomes;
  /** Where each finished request's JSON line goes (stdout). */
  readonly requestLog: RequestLog;
  /** The config in force now (a realtime session checks each response against it). */
  readonly live: () => Runtime;
}

/**
 * Builds the request handler:
 * log → route → auth → settle → access → limits → [handler: body → model → rules → reserve → upstream].
 * Settlement wraps everything after auth: every authenticated request gets its usage-log
 * entry, and a billed answer's last bytes go only once its charge is committed.
 */
export function buildChain(deps: ChainDeps): (ctx: RequestContext) => Promise<void> {
  const reserve = reserveStage(deps.admitter);
  const handlers: Record<HandlerName, (ctx: RequestContext) => Promise<void>> = {
    proxy: compose([bodyStage(deps.bodyBudget), modelStage(), rulesStage(), reserve, upstreamStage(deps.routing)]),
    responses: compose([
      bodyStage(deps.bodyBudget), modelStage(), rulesStage(), storedResponsesStage(deps.routing), reserve, upstreamStage(deps.routing),
    ]),
    multipart: compose([multipartBodyStage(deps.bodyBudget), modelStage(), rulesStage(), reserve, upstreamStage(deps.routing)]),
    upload: compose([uploadBodyStage(deps.bodyBudget), modelStage(), rulesStage(), reserve, upstreamStage(deps.routing)]),
    job: compose([jobAccessStage(deps.routing, deps.limiter), jobStage(deps.routing, deps.jobs)]),
    realtime: compose([realtimeModelStage(), modelStage(), reserveStage(deps.admitter, { session: true }),
      realtimeStage({
        routing: deps.routing, admitter: deps.admitter, accounts: deps.accounts, usageLog: deps.usageLog, observer: deps.usage, live: deps.live,
      })]),
    messages: compose([anthropicVersionStage(), bodyStage(deps.bodyBudget), modelStage(), rulesStage(), reserve, upstreamStage(deps.routing)]),
    // Free: no reserve stage, and the count stage marks what a channel answers uncharged.
    // No rules stage either: a request_schema describes a generation request (it may require
    // max_tokens, which a count body never has), and counting generates nothing.
    "messages-count-tokens": compose([anthropicVersionStage(), bodyStage(deps.bodyBudget), modelStage(), countTokensStage(deps.routing)]),
    "count-tokens": compose([bodyStage(deps.bodyBudget), modelStage(), countTokensStage(deps.routing)]),
    models: compose([modelsStage()]),
    billing: compose([billingDashboardStage(deps.accounts)]),
  };
  const dispatch: Stage<RequestContext> = (ctx) => handlers[ctx.route!.handler](ctx);
  // The handlers above with a reserve stage: it checks the money and takes the rate windows
  // in one step, so access and limits leave those to it.
  const admitsLater = (ctx: RequestContext): boolean => reserving.has(ctx.route!.handler);
  // A job fetch takes them too once its job names the model (the job-access stage).
  const takesWindowsLater = (ctx: RequestContext): boolean => admitsLater(ctx) || ctx.route!.handler === "job";
  return compose([
    logStage(deps.requestLog), routeStage(), authStage(), settleStage(deps.admitter, deps.usageLog, deps.usage),
    accessStage(deps.accounts, admitsLater), limitsStage(deps.limiter, takesWindowsLater), dispatch,
  ]);
}

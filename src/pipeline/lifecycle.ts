// The one lifecycle: every request runs log → route, then its route's phases, in the one
// order listed here. Each phase is a factory (route, deps) → stage, or null where the
// phase does not apply to the route (routes.ts says what each route is); a phase that
// applies always runs. The chains are composed once per route at startup, checked that
// each phase's needs are given by an earlier phase of the same route, and kept in a Map:
// a request only looks its route up.

import type { AccountDirectory } from "../accounts/directory.js";
import type { AccountService } from "../accounts/service.js";
import type { UsageSink } from "./usage-sink.js";
import type { RequestLog } from "../observability/request-log.js";
import type { JobOutcomes } from "../routing/job-outcomes.js";
import type { RoutingState } from "../routing/routing-state.js";
import type { Runtime } from "../runtime/types.js";
import type { Accounts, Admitter, Limiter, UsageLog } from "../state/interfaces.js";
import type { BodyBudget } from "./body-budget.js";
import type { Has, Needs, RequestContext, ResultName, Stage } from "./context.js";
import { allRoutes, type Route } from "./routes.js";
import { accessStage } from "./stages/access.js";
import { admitCallStage, admitWindowsStage } from "./stages/admit.js";
import { anthropicVersionStage } from "./stages/anthropic-version.js";
import { authStage } from "./stages/auth.js";
import { billingDashboardStage } from "./stages/billing-dashboard.js";
import { bodyStage } from "./stages/body.js";
import { countTokensStage } from "./stages/count-tokens.js";
import { jobStage } from "./stages/job.js";
import { jobAccessStage } from "./stages/job-access.js";
import { logStage } from "./stages/log.js";
import { modelStage } from "./stages/model.js";
import { modelsStage } from "./stages/models.js";
import { realtimeStage } from "./stages/realtime.js";
import { redeemStage } from "./stages/redeem.js";
import { routeStage } from "./stages/route.js";
import { rulesStage } from "./stages/rules.js";
import { settleStage } from "./stages/settle.js";
import type { PriceFallbacks } from "./price-fallbacks.js";
import { storedResponsesStage } from "./stages/stored-responses.js";
import { upgradeStage } from "./stages/upgrade.js";
import { upstreamStage } from "./stages/upstream.js";

/** What the phases are built from: the state, the routing state and the server's budgets. */
export interface LifecycleDeps {
  /** Told about every settled request (after billing, before its last bytes go). */
  readonly usage: UsageSink;
  readonly accounts: Accounts;
  readonly usageLog: UsageLog;
  readonly limiter: Limiter;
  /** Rate windows and the pre-deduction together (the admit phase). */
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
  /** Warns once per model about components billed at a base price. */
  readonly priceFallbacks: PriceFallbacks;
  /** Tokens and users: gateway.yaml's, then the store's (cached). */
  readonly directory: AccountDirectory;
  /** Account actions a token holder may take (redeeming a code). */
  readonly accountService: AccountService;
}

/** One phase of the lifecycle: what it needs and gives by name, and its stage for a route. */
export interface Phase<I, Add> {
  readonly name: string;
  /** The result it writes, if any. */
  readonly gives: ResultName | undefined;
  /** The results it reads on this route (each given by an earlier phase of the route). */
  needs(route: Route): readonly ResultName[];
  /** Its stage for the route, or null when it does not apply there. */
  make(route: Route, deps: LifecycleDeps): Stage<I, Add> | null;
}

/** A stage with its types erased, once the phase list has checked them. */
type Composed = (ctx: RequestContext, next: (ctx: RequestContext) => Promise<void>) => Promise<void>;

/** The phases in order, typed as they accumulate: a phase whose input the phases before it
 * do not produce is a compile error where it is added (`then`). */
class PhaseList<C> {
  constructor(readonly phases: readonly Phase<never, unknown>[]) {}

  then<I, Add>(phase: Phase<I, Add>, ..._fits: C extends I ? [] : [missing: "an earlier phase must give what this one needs"]): PhaseList<C & Add> {
    return new PhaseList<C & Add>([...this.phases, phase as unknown as Phase<never, unknown>]);
  }
}

const auth: Phase<Needs<"target">, Has<"caller">> = {
  name: "auth", gives: "caller", needs: () => ["target"], make: (_route, deps) => authStage(deps.directory),
};

/** Wraps everything after auth: every authenticated request gets its usage-log entry, and
 * gives back what admission took. */
const settle: Phase<Needs<"target" | "caller">, unknown> = {
  name: "settle", gives: "settled", needs: () => ["target", "caller"],
  make: (route, deps) => settleStage({ admitter: deps.admitter, limiter: deps.limiter, usageLog: deps.usageLog, observer: deps.usage, priceFallbacks: deps.priceFallbacks }, route),
};

const access: Phase<Needs<"target" | "caller">, Has<"account">> = {
  name: "access", gives: "account", needs: () => ["target", "caller"], make: (route, deps) => accessStage(deps.accounts, deps.directory, route),
};

const version: Phase<Needs<"target">, unknown> = {
  name: "version", gives: undefined, needs: () => ["target"],
  make: (route) => route.versionHeader === "anthropic-version" ? anthropicVersionStage() : null,
};

const upgrade: Phase<RequestContext, unknown> = {
  name: "upgrade", gives: undefined, needs: () => [], make: (route) => route.websocket ? upgradeStage() : null,
};

const body: Phase<Needs<"target">, Has<"input">> = {
  name: "body", gives: "input", needs: () => ["target"],
  make: (route, deps) => route.body === "none" ? null : bodyStage(deps.bodyBudget, route.body),
};

const model: Phase<Needs<"target" | "caller">, Has<"call">> = {
  name: "model", gives: "call", needs: (route) => route.model === "body" ? ["target", "caller", "input"] : ["target", "caller"],
  make: (route) => route.model === "none" ? null : modelStage(route),
};

/** On every route that reads a body and resolves a model, unless its requests are no
 * generation requests (token counting: route.requestRules). */
const rules: Phase<Needs<"target" | "input" | "call">, Has<"rules">> = {
  name: "rules", gives: "rules", needs: () => ["target", "input", "call"],
  make: (route) => route.body !== "none" && route.model !== "none" && route.requestRules ? rulesStage(route) : null,
};

const storedResponses: Phase<Needs<"caller" | "call">, Has<"edits">> = {
  name: "stored-responses", gives: "edits", needs: () => ["caller", "call"],
  make: (route, deps) => route.storedResponses ? storedResponsesStage(deps.routing) : null,
};

const jobAccess: Phase<Needs<"target" | "caller">, Has<"job">> = {
  name: "job-access", gives: "job", needs: () => ["target", "caller"],
  make: (route, deps) => route.terminal === "job" ? jobAccessStage(deps.routing) : null,
};

const admit: Phase<Needs<"target" | "caller" | "account" | "call">, Has<"admission">> = {
  name: "admit", gives: "admission",
  needs: (route) => route.admission === "reserve" || route.admission === "session" ? ["target", "caller", "account", "call"]
    : route.terminal === "job" ? ["target", "caller", "account", "job"] : ["target", "caller", "account"],
  make: (route, deps) => {
    switch (route.admission) {
      case "reserve": return admitCallStage(deps.admitter, route, false);
      case "session": return admitCallStage(deps.admitter, route, true);
      case "windows": return admitWindowsStage(deps.limiter, route);
      case "free": return null;
    }
  },
};

/** What each terminal reads. */
const terminalNeeds: Readonly<Record<Route["terminal"], readonly ResultName[]>> = {
  upstream: ["target", "caller", "input", "call"],
  "count-tokens": ["target", "caller", "input", "call"],
  models: ["target", "caller"],
  billing: ["caller", "account"],
  redeem: ["caller", "account", "input"],
  job: ["target", "job"],
  realtime: ["caller", "account", "call"],
};

const terminal: Phase<Needs<"target" | "caller" | "account" | "input" | "call" | "job">, unknown> = {
  name: "terminal", gives: "outcome", needs: (route) => terminalNeeds[route.terminal],
  make: (route, deps) => {
    switch (route.terminal) {
      case "upstream": return upstreamStage(deps.routing, route);
      case "count-tokens": return countTokensStage(deps.routing, route);
      case "models": return modelsStage();
      case "billing": return billingDashboardStage(deps.accounts);
      case "redeem": return redeemStage(deps.accountService, deps.limiter);
      case "job": return jobStage(deps.routing, deps.jobs);
      case "realtime": return realtimeStage({
        routing: deps.routing, admitter: deps.admitter, accounts: deps.accounts, usageLog: deps.usageLog, observer: deps.usage, live: deps.live,
        directory: deps.directory, priceFallbacks: deps.priceFallbacks,
      }, route);
    }
  },
};

/** The phases after the route is known, in the one order. */
const phases = new PhaseList<Needs<"target">>([])
  .then(auth).then(settle).then(access).then(version).then(upgrade).then(body).then(model).then(rules)
  .then(storedResponses).then(jobAccess).then(admit).then(terminal).phases;

/** The names of the phases a route runs after log → route, in order. */
export function phasesOf(route: Route, deps: LifecycleDeps): string[] {
  return applying(route, deps).map(([phase]) => phase.name);
}

function applying(route: Route, deps: LifecycleDeps): [Phase<never, unknown>, Composed][] {
  const out: [Phase<never, unknown>, Composed][] = [];
  for (const phase of phases) {
    const stage = phase.make(route, deps);
    if (stage) out.push([phase, stage as unknown as Composed]);
  }
  return out;
}

/** A route's chain, after checking that each of its phases' needs is given by an earlier
 * one (throws naming the route, the phase and the result when not). */
export function composeRoute(route: Route, deps: LifecycleDeps): (ctx: RequestContext) => Promise<void> {
  const stages = applying(route, deps);
  checkNeeds(route, stages);
  return chain(stages.map(([, stage]) => stage));
}

/** Throws when a phase of the route reads a result no earlier phase of it gives (a route
 * that skips a producer must skip its consumers). */
function checkNeeds(route: Route, chain: readonly [Phase<never, unknown>, Composed][]): void {
  const given = new Set<ResultName>(["target"]);
  for (const [phase] of chain) {
    for (const need of phase.needs(route)) {
      if (!given.has(need)) throw new Error(`route ${route.name} (${route.terminal}): phase ${phase.name} needs ${need}, which no earlier phase gives`);
    }
    if (phase.gives) given.add(phase.gives);
  }
}

/** Chains stages into one function, each position's `next` made once: no closure per request. */
function chain(stages: readonly Composed[]): (ctx: RequestContext) => Promise<void> {
  let run: (ctx: RequestContext) => Promise<void> = () => Promise.resolve();
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i];
    const next = run;
    run = (ctx) => {
      try {
        return stage(ctx, next);
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  return run;
}

/**
 * Builds the request handler: log → route → the route's chain (composed here, once per
 * route, after its needs are checked). Settlement wraps everything after auth: every
 * authenticated request gets its usage-log entry, and a billed answer's last bytes go only
 * once its charge is committed.
 */
export function buildLifecycle(deps: LifecycleDeps): (ctx: RequestContext) => Promise<void> {
  const chains = new Map<Route, (ctx: RequestContext) => Promise<void>>();
  for (const route of allRoutes()) chains.set(route, composeRoute(route, deps));
  const dispatch = (ctx: Needs<"target">): Promise<void> => {
    const run = chains.get(ctx.target.route);
    if (!run) throw new Error(`no chain for route ${ctx.target.route.name}`);
    return run(ctx);
  };
  return chain([logStage(deps.requestLog) as Composed, routeStage() as unknown as Composed, dispatch as unknown as Composed]);
}

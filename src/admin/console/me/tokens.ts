// The customer's own tokens: GET /tokens lists their user's (hints, never keys), and, when
// the operator allows it (console.customer_tokens), POST /tokens creates one in the
// signed-in token's group (its key in that answer only), PATCH /tokens/{name} sets its
// quota, expiry or status, DELETE /tokens/{name} revokes it. Every change goes through the
// AccountService, audited with the signed-in token as actor (token:<name>). Another user's
// token answers 404 as an unknown one does; a token gateway.yaml declares is the operator's.

import { InvalidField, parseExpiry, parseMoney } from "../../../accounts/money-input.js";
import type { TokenView } from "../../../accounts/service.js";
import { NotFound, type Actor, type TokenPatch } from "../../../accounts/store.js";
import { errors } from "../../../errors/catalogue.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import { intParam, knownParams, objectBody } from "./input.js";
import { meRoute, type Customer, type MeDeps } from "./route.js";

/** Most active or disabled tokens a user may hold when creating more from the console. */
export const MAX_CUSTOMER_TOKENS = 50;
/** Most tokens one page of the list holds. */
const MAX_PAGE = 100;

const changesOff = "Changing tokens from the console is turned off by the operator (console.customer_tokens): ask them to create or change tokens for you.";

export const tokenRoutes = [
  meRoute("GET", "/tokens", async ({ customer, query }, deps) => {
    knownParams(query, ["after", "limit"]);
    const limit = intParam(query, "limit", { min: 1, max: MAX_PAGE, fallback: MAX_PAGE });
    const after = query.get("after") ?? undefined;
    const page = await customerTokens(customer, deps, { after, limit });
    const changes = deps.live().console.customerTokens;
    return {
      status: 200,
      body: {
        data: page.items.map((t) => ({ ...t, ...(t.name === customer.token ? { current: true } : {}) })),
        ...(page.next === undefined ? {} : { next: page.next }),
        customer_tokens: changes,
      },
    };
  }),

  meRoute("POST", "/tokens", async ({ customer, body, now }, deps) => {
    const user = changeableUser(customer, deps);
    const b = objectBody(body, ["name", "quota", "expires"]);
    if (typeof b.name !== "string") throw new InvalidField("name", b.name === undefined ? "is required" : "must be a string");
    const quotaNano = b.quota === undefined || b.quota === null ? undefined : parseMoney(b.quota, "quota", { allowZero: true });
    const expiresAt = b.expires === undefined || b.expires === null ? undefined : futureExpiry(b.expires, now);
    const held = await deps.service.tokens({ user, limit: 1000 });
    if (held.items.filter((t) => t.status !== "revoked").length >= MAX_CUSTOMER_TOKENS) {
      throw new GatewayError(errors.invalidParameter, `This account holds ${MAX_CUSTOMER_TOKENS} tokens already, the most the console creates: revoke one first.`);
    }
    const { token, key } = await deps.service.createToken({ name: b.name, user, group: customer.group, quotaNano, expiresAt }, actorOf(customer));
    return { status: 201, body: { ...token, key }, headers: { "cache-control": "no-store" } };
  }),

  meRoute("PATCH", "/tokens/{name}", async ({ customer, body, now }, deps, params) => {
    changeableUser(customer, deps);
    const b = objectBody(body, ["quota", "expires", "status"]);
    const target = await ownToken(customer, deps, params.name);
    const patch: { -readonly [K in keyof TokenPatch]: TokenPatch[K] } = {};
    if (b.quota !== undefined) patch.quotaNano = b.quota === null ? null : parseMoney(b.quota, "quota", { allowZero: true });
    if (b.expires !== undefined) patch.expiresAt = b.expires === null ? null : futureExpiry(b.expires, now);
    if (b.status !== undefined) {
      if (b.status !== "active" && b.status !== "disabled") throw new InvalidField("status", "must be one of: active, disabled");
      if (b.status === "disabled" && target.name === customer.token) throw new InvalidField("status", "this is the token you are signed in with: sign in with another to disable it");
      if (b.status === "active" && target.status === "disabled") await checkDisabledByCustomer(customer, deps, target.name);
      patch.status = b.status;
    }
    if (Object.keys(patch).length === 0) throw new InvalidField("(body)", "name something to change: quota, expires or status");
    const token = await deps.service.updateToken(target.name, patch, actorOf(customer));
    return { status: 200, body: token };
  }),

  meRoute("DELETE", "/tokens/{name}", async ({ customer }, deps, params) => {
    changeableUser(customer, deps);
    const target = await ownToken(customer, deps, params.name);
    if (target.name === customer.token) throw new InvalidField("name", "this is the token you are signed in with: sign in with another to revoke it");
    const token = await deps.service.revokeToken(target.name, actorOf(customer));
    return { status: 200, body: token };
  }),
] as const;

const actorOf = (customer: Customer): Actor => ({ actor: `token:${customer.token}` });

/** The user whose tokens the customer may change: 403 while the operator does not allow it,
 * or when their tokens are gateway.yaml's (or they have no user). */
function changeableUser(customer: Customer, deps: MeDeps): string {
  const runtime = deps.live();
  if (!runtime.console.customerTokens) throw new GatewayError(errors.customerTokensOff, changesOff);
  if (customer.user === undefined || runtime.users.has(customer.user)) {
    throw new GatewayError(errors.customerTokensOff, "This account's tokens are declared by the operator in gateway.yaml: ask them to change them.");
  }
  return customer.user;
}

/** A stored token of the customer's user, read; any other name answers 404 (whether it
 * exists or not, so another tenant's names are not told). */
async function ownToken(customer: Customer, deps: MeDeps, name: string): Promise<TokenView> {
  const found = await deps.service.token(name).catch((err: unknown) => {
    if (err instanceof NotFound) return undefined;
    throw err;
  });
  if (!found || found.user !== customer.user || found.status === "revoked") throw new NotFound("token", name);
  if (found.source === "gateway.yaml") throw new GatewayError(errors.customerTokensOff, `Token '${name}' is declared by the operator in gateway.yaml: ask them to change it.`);
  return found;
}

/** A token the operator disabled stays disabled: only one a token of the same user
 * disabled (from the console) may be enabled again here. The audit log says who. */
async function checkDisabledByCustomer(customer: Customer, deps: MeDeps, name: string): Promise<void> {
  const page = await deps.store.audit({ target: name, limit: 100 });
  const disabling = page.items.find((r) => r.action.startsWith("token.") && (r.after as { status?: string } | undefined)?.status === "disabled");
  const by = disabling?.actor.startsWith("token:") ? disabling.actor.slice("token:".length) : undefined;
  const ours = by !== undefined && (await deps.service.token(by).then((t) => t.user === customer.user, () => false));
  if (!ours) throw new GatewayError(errors.customerTokensOff, `Token '${name}' was disabled by the operator: ask them to enable it.`);
}

/** An expiry from now on (a date-time, or a span such as 30d). */
function futureExpiry(value: unknown, now: number): number {
  const at = parseExpiry(value, "expires", now);
  if (at <= now) throw new InvalidField("expires", "must be in the future");
  return at;
}

/** The tokens a customer sees: their user's (gateway.yaml's, or stored ones a page at a
 * time), or only their own when the token has no user. */
async function customerTokens(customer: Customer, deps: MeDeps, page: { after?: string; limit: number }): Promise<{ items: TokenView[]; next?: string }> {
  const runtime = deps.live();
  let names: string[];
  let next: string | undefined;
  if (customer.user === undefined) {
    names = [customer.token];
  } else if (runtime.users.has(customer.user)) {
    const declared = [...runtime.tokensByHash.values()].filter((t) => t.user === customer.user).map((t) => t.name).sort();
    const rest = declared.filter((n) => page.after === undefined || n > page.after);
    names = rest.slice(0, page.limit);
    if (rest.length > page.limit) next = names.at(-1);
  } else {
    const stored = await deps.service.tokens({ user: customer.user, limit: page.limit, ...(page.after === undefined ? {} : { after: page.after }) });
    names = stored.items.map((t) => t.name);
    next = stored.next;
  }
  // One read each: the view with what it has spent (as the admin API's token read).
  const items = await Promise.all(names.map((n) => deps.service.token(n)));
  return { items: items.filter((t) => customer.user === undefined || t.user === customer.user), ...(next === undefined ? {} : { next }) };
}

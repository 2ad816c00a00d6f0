// The users routes: list, create, read and change users, and their credit ledger (grants,
// top-ups and adjustments, idempotent by key). Reads show the money: credit, spent,
// reserved and balance, as exact decimals.

import { InvalidField, parseMoney } from "../accounts/money-input.js";
import type { SettingsPatch } from "../accounts/service.js";
import type { UserPatch } from "../accounts/store.js";
import { listBody, nameListQuery, type AdminCall, type AdminRoute } from "./route.js";
import { etagOf, expectedVersion, headerValue, pageQuery } from "./request-parts.js";

interface UserCreateBody {
  readonly name: string;
  readonly groups?: string[];
  readonly status?: "active" | "disabled";
  readonly note?: string;
  readonly credit?: string | number;
  readonly plan?: string;
  readonly limits?: Record<string, unknown>;
  readonly budgets?: Record<string, unknown>[];
}

interface UserPatchBody extends SettingsPatch {
  readonly status?: "active" | "disabled";
  readonly groups?: string[];
  readonly note?: string | null;
  readonly version?: number;
}

interface CreditBody {
  readonly amount: string | number;
  readonly reason: string;
  readonly idempotency_key?: string;
}

const userPath = "/admin/v1/users/{name}";
const creditPath = "/admin/v1/users/{name}/credit";

export const userRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/users", operationId: "listUsers", scope: "read",
    summary: "Lists users (stored ones and gateway.yaml's) in name order, with their money.",
    query: nameListQuery, responses: { 200: "UserList" },
    async handle({ query, deps }) {
      const page = await deps.service.users(pageQuery(query));
      return { status: 200, body: listBody(page.items, page.next) };
    },
  },
  {
    method: "POST", path: "/admin/v1/users", operationId: "createUser", scope: "write",
    summary: "Creates a user in the store; `credit` is written to its ledger as an opening grant.",
    body: "UserCreate", responses: { 201: "User" },
    async handle({ body, actor, deps }) {
      const b = body as UserCreateBody;
      const creditNano = b.credit === undefined ? undefined : parseMoney(b.credit, "credit", { allowZero: true });
      const settings = { ...(b.plan === undefined ? {} : { plan: b.plan }), ...(b.limits === undefined ? {} : { limits: b.limits }), ...(b.budgets === undefined ? {} : { budgets: b.budgets }) };
      const user = await deps.service.createUser({
        name: b.name, groups: b.groups, status: b.status, note: b.note, creditNano, ...(Object.keys(settings).length === 0 ? {} : { settings }),
      }, actor);
      return { status: 201, body: user, headers: etagOf(user.version) };
    },
  },
  {
    method: "GET", path: userPath, operationId: "getUser", scope: "read",
    summary: "Reads a user: status, groups, credit, spent, reserved and balance. The ETag is its version.",
    responses: { 200: "User" },
    async handle({ params, deps }) {
      const user = await deps.service.user(params.name);
      return { status: 200, body: user, headers: etagOf(user.version) };
    },
  },
  {
    method: "PATCH", path: userPath, operationId: "updateUser", scope: "write",
    summary: "Changes a stored user's status, groups, note, plan, limits or budgets. With `version` (or If-Match) a change that raced another is refused with 409.",
    body: "UserPatch", headers: { "If-Match": "The version the change is based on, as an alternative to `version`." },
    responses: { 200: "User" },
    async handle({ params, body, headers, actor, deps }) {
      const b = body as UserPatchBody;
      const patch: UserPatch = {
        ...(b.status === undefined ? {} : { status: b.status }),
        ...(b.groups === undefined ? {} : { groups: b.groups }),
        ...(b.note === undefined ? {} : { note: b.note }),
      };
      const settings = settingsPatchOf(b);
      if (Object.keys(patch).length === 0 && Object.keys(settings).length === 0) {
        throw new InvalidField("(body)", "name something to change: status, groups, note, plan, limits or budgets");
      }
      const user = await deps.service.updateUser(params.name, patch, actor, expectedVersion(b.version, headers), settings);
      return { status: 200, body: user, headers: etagOf(user.version) };
    },
  },
  {
    method: "POST", path: creditPath, operationId: "addCredit", scope: "billing",
    summary: "Adds a grant or top-up (positive) or an adjustment (negative) to the user's credit ledger. The same idempotency key credits once: the first call answers 201, a replay 200 with the first entry and `created: false`.",
    body: "CreditCreate", headers: { "Idempotency-Key": "The idempotency key, as an alternative to `idempotency_key`." },
    responses: { 201: "CreditResult", 200: "CreditResult" },
    async handle(call) {
      const b = call.body as CreditBody;
      const amount = parseMoney(b.amount, "amount", { allowNegative: true });
      const result = await call.deps.service.addCredit(call.params.name, amount, b.reason, call.actor, idempotencyKeyOf(call, b));
      return { status: result.created ? 201 : 200, body: result };
    },
  },
  {
    method: "GET", path: creditPath, operationId: "listCredit", scope: "read",
    summary: "Lists the user's credit entries, newest first.",
    query: {
      before: { schema: { type: "integer", minimum: 1 }, description: "The `next` of the previous page." },
      limit: nameListQuery.limit,
    },
    responses: { 200: "CreditList" },
    async handle({ params, query, deps }) {
      const page = await deps.service.creditEntries(params.name, { before: query.before as number | undefined, limit: query.limit as number | undefined });
      return { status: 200, body: listBody(page.items, page.next) };
    },
  },
];

/** The plan, limits and budgets a PATCH names (null removes one). */
export function settingsPatchOf(b: SettingsPatch): SettingsPatch {
  return {
    ...(b.plan === undefined ? {} : { plan: b.plan }),
    ...(b.limits === undefined ? {} : { limits: b.limits }),
    ...(b.budgets === undefined ? {} : { budgets: b.budgets }),
  };
}

/** The body's idempotency_key or the Idempotency-Key header; both given must agree. */
function idempotencyKeyOf(call: AdminCall, body: CreditBody): string | undefined {
  const header = headerValue(call.headers, "idempotency-key");
  if (header !== undefined && body.idempotency_key !== undefined && header !== body.idempotency_key) {
    throw new InvalidField("idempotency_key", "differs from the Idempotency-Key header: send one, or the same in both");
  }
  if (header !== undefined && (header === "" || header.length > 200)) throw new InvalidField("Idempotency-Key", "must be 1 to 200 characters");
  return body.idempotency_key ?? header;
}

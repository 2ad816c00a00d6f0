// The tokens routes: list, create (the key is in that answer and nowhere else, ever), read,
// change and revoke stored tokens. Money in exact decimals, times as ISO 8601.

import { InvalidField, parseExpiry, parseMoney } from "../accounts/money-input.js";
import type { SettingsPatch } from "../accounts/service.js";
import type { TokenPatch } from "../accounts/store.js";
import { settingsPatchOf } from "./users.js";
import { listBody, nameListQuery, type AdminRoute } from "./route.js";
import { etagOf, expectedVersion, pageQuery } from "./request-parts.js";

interface TokenCreateBody {
  readonly name: string;
  readonly user: string;
  readonly group?: string;
  readonly expires?: string;
  readonly quota?: string | number;
  readonly allow_ips?: string[];
  readonly models?: string[];
  readonly status?: "active" | "disabled";
  readonly limits?: Record<string, unknown>;
  readonly budgets?: Record<string, unknown>[];
}

interface TokenPatchBody extends SettingsPatch {
  readonly status?: "active" | "disabled";
  readonly group?: string;
  readonly expires?: string | null;
  readonly quota?: string | number | null;
  readonly allow_ips?: string[] | null;
  readonly models?: string[] | null;
  readonly version?: number;
}

const tokenPath = "/admin/v1/tokens/{name}";

export const tokenRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/tokens", operationId: "listTokens", scope: "read",
    summary: "Lists stored tokens in name order (gateway.yaml's are read one by one).",
    query: { user: { schema: { type: "string" }, description: "Only this user's tokens." }, ...nameListQuery },
    responses: { 200: "TokenList" },
    async handle({ query, deps }) {
      const user = query.user === undefined ? {} : { user: String(query.user) };
      const page = await deps.service.tokens({ ...pageQuery(query), ...user });
      return { status: 200, body: listBody(page.items, page.next) };
    },
  },
  {
    method: "POST", path: "/admin/v1/tokens", operationId: "createToken", scope: "write",
    summary: "Creates a token for a stored user. The answer's `key` is shown this once: only its sha256 is kept.",
    body: "TokenCreate", responses: { 201: "TokenCreated" },
    async handle({ body, actor, deps }) {
      const b = body as TokenCreateBody;
      const { token, key } = await deps.service.createToken({
        name: b.name, user: b.user, group: b.group, status: b.status, allowIps: b.allow_ips, models: b.models,
        expiresAt: b.expires === undefined ? undefined : parseExpiry(b.expires, "expires", deps.now()),
        quotaNano: b.quota === undefined ? undefined : parseMoney(b.quota, "quota", { allowZero: true }),
        ...(b.limits === undefined && b.budgets === undefined ? {} : {
          settings: { ...(b.limits === undefined ? {} : { limits: b.limits }), ...(b.budgets === undefined ? {} : { budgets: b.budgets }) },
        }),
      }, actor);
      return { status: 201, body: { ...token, key }, headers: { ...etagOf(token.version), "cache-control": "no-store" } };
    },
  },
  {
    method: "GET", path: tokenPath, operationId: "getToken", scope: "read",
    summary: "Reads a token (stored or gateway.yaml's) with what it has spent; never its key. The ETag is its version.",
    responses: { 200: "Token" },
    async handle({ params, deps }) {
      const token = await deps.service.token(params.name);
      return { status: 200, body: token, headers: etagOf(token.version) };
    },
  },
  {
    method: "PATCH", path: tokenPath, operationId: "updateToken", scope: "write",
    summary: "Changes a stored token's status, group, expiry, quota, allowlists, limits or budgets (null removes one). With `version` (or If-Match) a change that raced another is refused with 409.",
    body: "TokenPatch", headers: { "If-Match": "The version the change is based on, as an alternative to `version`." },
    responses: { 200: "Token" },
    async handle({ params, body, headers, actor, deps }) {
      const b = body as TokenPatchBody;
      const patch: TokenPatch = {
        ...(b.status === undefined ? {} : { status: b.status }),
        ...(b.group === undefined ? {} : { group: b.group }),
        ...(b.expires === undefined ? {} : { expiresAt: b.expires === null ? null : parseExpiry(b.expires, "expires", deps.now()) }),
        ...(b.quota === undefined ? {} : { quotaNano: b.quota === null ? null : parseMoney(b.quota, "quota", { allowZero: true }) }),
        ...(b.allow_ips === undefined ? {} : { allowIps: b.allow_ips }),
        ...(b.models === undefined ? {} : { models: b.models }),
      };
      const settings = settingsPatchOf({ ...b, plan: undefined });
      if (Object.keys(patch).length === 0 && Object.keys(settings).length === 0) {
        throw new InvalidField("(body)", "name something to change: status, group, expires, quota, allow_ips, models, limits or budgets");
      }
      const token = await deps.service.updateToken(params.name, patch, actor, expectedVersion(b.version, headers), settings);
      return { status: 200, body: token, headers: etagOf(token.version) };
    },
  },
  {
    method: "DELETE", path: tokenPath, operationId: "revokeToken", scope: "write",
    summary: "Revokes a stored token for good (its name stays taken); revoking again answers the same.",
    responses: { 200: "Token" },
    async handle({ params, actor, deps }) {
      const token = await deps.service.revokeToken(params.name, actor);
      return { status: 200, body: token, headers: etagOf(token.version) };
    },
  },
];

// What an admin route is, as data: method, path template, the scope it needs, its query
// parameters, body and answer schemas, and the handler. The dispatcher (api.ts) and the
// OpenAPI document (openapi.ts) are both made from the one table (routes.ts).

import type { KeyControl } from "../routing/key-control.js";
import type { IncomingHttpHeaders } from "node:http";
import type { AccountService } from "../accounts/service.js";
import type { AccountStore, Actor } from "../accounts/store.js";
import type { AdminScope, Runtime } from "../runtime/types.js";
import type { UsageLog } from "../state/interfaces.js";
import type { JsonSchema, SchemaName } from "./schemas.js";

export type AdminMethod = "GET" | "POST" | "PATCH" | "DELETE";

/** What the handlers work with, for the server's life. */
export interface AdminDeps {
  readonly service: AccountService;
  readonly store: AccountStore;
  readonly usageLog: UsageLog;
  /** Channel keys taken out by an operator, and every key's state. */
  readonly keyControl: KeyControl;
  readonly now: () => number;
}

/** One request, checked: path parameters decoded, query and body valid against their schemas. */
export interface AdminCall {
  readonly params: Readonly<Record<string, string>>;
  /** Integer parameters as numbers, the rest as strings; absent ones missing. */
  readonly query: Readonly<Record<string, string | number | undefined>>;
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  /** The admin key's name: the audit log's actor. */
  readonly actor: Actor;
  readonly deps: AdminDeps;
  /** The configuration in force for this request (its channels, prices and groups). */
  readonly runtime: Runtime;
  /** The OpenAPI document (served by its own route). */
  readonly openapi: () => unknown;
}

export interface AdminAnswer {
  readonly status: number;
  /** A JSON answer's body (ignored when `text` is given). */
  readonly body?: unknown;
  /** A text answer (CSV): sent as it is, its content-type in `headers`. */
  readonly text?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface QueryParam {
  readonly schema: JsonSchema;
  readonly description: string;
  readonly required?: boolean;
}

export interface AdminRoute {
  readonly method: AdminMethod;
  /** e.g. /admin/v1/users/{name}: OpenAPI's template syntax. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  /** Absent: no admin key needed (the OpenAPI document). */
  readonly scope?: AdminScope;
  readonly query?: Readonly<Record<string, QueryParam>>;
  /** The request body's schema; absent: the route takes no body. */
  readonly body?: SchemaName;
  /** The success statuses and their answer schemas. */
  readonly responses: Readonly<Partial<Record<200 | 201, SchemaName>>>;
  /** The route answers CSV too (with format=csv): what its columns are, for the document. */
  readonly csv?: string;
  /** Headers the route reads, for the document. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly handle: (call: AdminCall) => Promise<AdminAnswer>;
}

/** The page parameters every name-ordered list takes. */
export const nameListQuery: Readonly<Record<string, QueryParam>> = {
  prefix: { schema: { type: "string" }, description: "Only names starting with this." },
  after: { schema: { type: "string" }, description: "The `next` of the previous page." },
  limit: { schema: { type: "integer", minimum: 1, maximum: 1000 }, description: "Items per page, 1 to 1000 (default 100)." },
};

/** A page as the API answers it: `next` only when there is a following page. */
export function listBody<T>(items: readonly T[], next: string | undefined): { data: readonly T[]; next?: string } {
  return next === undefined ? { data: items } : { data: items, next };
}

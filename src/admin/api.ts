// The admin API's request handler: finds the route by path and method (404, 405 with Allow),
// checks the admin key and its scope (401, 403), the query and the JSON body against their
// schemas (400 naming the field), runs the route and answers JSON. Admin requests never
// enter the request lifecycle: no usage log, no billing.

import type { IncomingMessage, ServerResponse } from "node:http";
import { packageVersion } from "../runtime/version.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { AdminKey, Runtime } from "../runtime/types.js";
import { adminKeyOf, requireScope } from "./auth.js";
import { adminErrorOf } from "./errors.js";
import { readJsonBody, sendAdminError, sendJson, sendText } from "./http.js";
import { openApiDocument } from "./openapi.js";
import type { AdminCall, AdminDeps, AdminMethod, AdminRoute } from "./route.js";
import { adminRoutes } from "./routes.js";
import { checkOf, checkSchema, type Check } from "./validation.js";

/** The prefix of every admin path (what the server hands here). */
export const ADMIN_PREFIX = "/admin/";

/** One route, compiled: its path as a pattern and its checks. */
interface Compiled {
  readonly route: AdminRoute;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  readonly query: Check;
  readonly body?: Check;
}

/** A request to the admin API, as the server hands it over. */
export interface AdminRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  /** The query string without its `?`. */
  readonly query: string;
  readonly requestId: string;
}

export class AdminApi {
  readonly #live: () => Runtime;
  readonly #deps: AdminDeps;
  readonly #routes: readonly Compiled[];
  #document: Record<string, unknown> | undefined;

  constructor(live: () => Runtime, deps: AdminDeps, routes: readonly AdminRoute[] = adminRoutes) {
    this.#live = live;
    this.#deps = deps;
    this.#routes = routes.map(compile);
  }

  /** The OpenAPI document (made once). */
  document(): Record<string, unknown> {
    return (this.#document ??= openApiDocument(this.#routes.map((c) => c.route), packageVersion()));
  }

  /** Answers one request whose path starts with /admin/; never rejects. */
  handle(request: AdminRequest): Promise<void> {
    return this.#handle(request, undefined);
  }

  /**
   * Answers one request as `key`, an admin key the caller has already authenticated (the
   * console's operator session, checked against the live admin.keys on each call): the
   * same routes, scope checks and audit actor as a request carrying that key. Never rejects.
   */
  handleAs(request: AdminRequest, key: AdminKey): Promise<void> {
    return this.#handle(request, key);
  }

  async #handle(request: AdminRequest, key: AdminKey | undefined): Promise<void> {
    const { req, res, requestId } = request;
    const runtime = this.#live();
    try {
      const answer = await this.#answer(request, runtime, key);
      // A body the route did not read (a DELETE or GET that sent one) is read and dropped.
      if (!req.complete) req.resume();
      if (answer.text !== undefined) sendText(res, answer.status, answer.text, answer.headers);
      else sendJson(res, answer.status, answer.body, answer.headers);
    } catch (err) {
      sendAdminError(req, res, adminErrorOf(err, requestId), runtime.server);
    }
  }

  async #answer(request: AdminRequest, runtime: Runtime, authenticated: AdminKey | undefined) {
    const admin = runtime.admin;
    if (!admin) throw new GatewayError(errors.notFound);
    const { req } = request;
    const { compiled, params } = this.#match(request.path, req.method ?? "GET");
    const { route } = compiled;
    let actor = "";
    if (route.scope !== undefined) {
      const key = authenticated ?? adminKeyOf(req.headers, admin.keys);
      requireScope(key, route.scope);
      actor = key.name;
    }
    const query = queryOf(request.query, route);
    const badQuery = compiled.query(query);
    if (badQuery) throw badQuery;
    let body: unknown;
    if (compiled.body) {
      body = await readJsonBody(req, runtime.server);
      const badBody = compiled.body(body);
      if (badBody) throw badBody;
    }
    const call: AdminCall = { params, query, body, headers: req.headers, actor: { actor }, deps: this.#deps, runtime, openapi: () => this.document() };
    return route.handle(call);
  }

  /** The route for a path and method; throws the 404 or the 405 (with Allow). */
  #match(path: string, method: string): { compiled: Compiled; params: Record<string, string> } {
    const allowed: AdminMethod[] = [];
    for (const compiled of this.#routes) {
      const m = compiled.pattern.exec(path);
      if (!m) continue;
      if (compiled.route.method !== method) {
        allowed.push(compiled.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      compiled.names.forEach((name, i) => (params[name] = decoded(m[i + 1], name)));
      return { compiled, params };
    }
    if (allowed.length === 0) throw new GatewayError(errors.notFound, `No such admin endpoint: ${method} ${path}. GET /admin/v1/openapi.json lists them.`);
    throw new GatewayError(errors.methodNotAllowed, `${path} takes ${allowed.join(", ")}.`, { headers: { allow: allowed.join(", ") } });
  }
}

function compile(route: AdminRoute): Compiled {
  const names: string[] = [];
  const source = route.path.split("/").map((segment) => {
    const m = /^\{(\w+)\}$/.exec(segment);
    if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    names.push(m[1]);
    return "([^/]+)";
  }).join("/");
  const properties = Object.fromEntries(Object.entries(route.query ?? {}).map(([name, p]) => [name, p.schema]));
  const required = Object.entries(route.query ?? {}).filter(([, p]) => p.required).map(([name]) => name);
  return {
    route, names, pattern: new RegExp(`^${source}$`),
    query: checkSchema({ type: "object", additionalProperties: false, properties, required }),
    ...(route.body === undefined ? {} : { body: checkOf(route.body) }),
  };
}

/** The query string as an object: integer parameters as numbers when they read as one (ajv
 * names the field otherwise), the rest as strings; a repeated parameter keeps its first value. */
function queryOf(text: string, route: AdminRoute): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (name in out) continue;
    const integer = (route.query?.[name]?.schema as { type?: string } | undefined)?.type === "integer";
    out[name] = integer && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
  }
  return out;
}

function decoded(segment: string, name: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new GatewayError(errors.invalidParameter, `${name}: is not a valid URL path segment`);
  }
}

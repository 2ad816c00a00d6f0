// The console's server side, outside the request lifecycle (like /admin/): the page and its
// hashed assets, the session routes, the customer's own data under /console/api/me, and for
// an operator the admin API itself under /console/api/admin/… (as the session's admin key,
// with its scopes and its name in the audit log), so the console can do nothing the API cannot.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { AccountDirectory } from "../../accounts/directory.js";
import type { AccountService } from "../../accounts/service.js";
import type { AccountStore } from "../../accounts/store.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Runtime } from "../../runtime/types.js";
import type { KeyedStore, Limiter, UsageLog } from "../../state/interfaces.js";
import type { AdminApi } from "../api.js";
import { adminErrorOf } from "../errors.js";
import { readJsonBody } from "../http.js";
import { sendApiError, sendApiJson, sendPage, setConsoleHeaders } from "./answers.js";
import { ConsoleAssets, notBuiltPage } from "./assets.js";
import { callerOfSession, type CallerContext, type Customer, type Operator } from "./caller.js";
import { meCustomer, meRouteFor } from "./me-mount.js";
import { ConsoleSessions, csrfMatches, type FoundSession } from "./session.js";
import { sessionAnswer, signIn, signOut } from "./signin.js";

export const CONSOLE_PATH = "/console";
const ASSETS = "/console/assets/";
const API = "/console/api/";
const ADMIN_API = "/console/api/admin/";

/** Whether the server should hand this path to the console. */
export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

export interface ConsoleDeps {
  readonly live: () => Runtime;
  readonly directory: AccountDirectory;
  readonly service: AccountService;
  /** The audit log, for the customer's token routes. */
  readonly store: AccountStore;
  readonly keyed: KeyedStore;
  readonly limiter: Limiter;
  readonly usageLog: UsageLog;
  readonly admin: AdminApi;
  /** Default: console/build at the package root. */
  readonly assets?: ConsoleAssets;
  readonly now?: () => number;
}

/** A console request, as a listener hands it over. */
export interface ConsoleRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  readonly query: string;
  readonly requestId: string;
  /** Whether operators may sign in and use the admin API on this listener. */
  readonly operators: boolean;
}

export class ConsoleApp {
  readonly #deps: ConsoleDeps;
  readonly #assets: ConsoleAssets;
  readonly #sessions: ConsoleSessions;
  readonly #now: () => number;

  constructor(deps: ConsoleDeps) {
    this.#deps = deps;
    this.#assets = deps.assets ?? new ConsoleAssets();
    this.#sessions = new ConsoleSessions(deps.keyed);
    this.#now = deps.now ?? Date.now;
  }

  /** Answers one request whose path is /console or under it; never rejects. */
  async handle(r: ConsoleRequest): Promise<void> {
    const runtime = this.#deps.live();
    setConsoleHeaders(r.res);
    try {
      if (r.path.startsWith(API)) await this.#api(r, runtime);
      else this.#static(r);
    } catch (err) {
      sendApiError(r.req, r.res, adminErrorOf(err, r.requestId), runtime.server);
    }
    if (!r.req.complete) r.req.resume();
  }

  /** The page (any path under /console but the API's, so the app may have its own URLs) and
   * the assets; only names the build's manifest lists are served. */
  #static({ req, res, path }: ConsoleRequest): void {
    if (req.method !== "GET" && req.method !== "HEAD") {
      throw new GatewayError(errors.methodNotAllowed, `${path} takes GET, HEAD.`, { headers: { allow: "GET, HEAD" } });
    }
    const build = this.#assets.current();
    if (!build) return sendPage(req, res, 503, notBuiltPage);
    if (!path.startsWith(ASSETS)) return sendPage(req, res, 200, build.index);
    const asset = build.assets.get(path.slice(ASSETS.length));
    if (!asset) throw new GatewayError(errors.notFound, `No such console asset: ${path}.`);
    res.writeHead(200, {
      "content-type": asset.contentType, "content-length": asset.body.length,
      "cache-control": "public, max-age=31536000, immutable",
    });
    res.end(req.method === "HEAD" ? undefined : asset.body);
  }

  async #api(r: ConsoleRequest, runtime: Runtime): Promise<void> {
    const { req, res, path } = r;
    const method = req.method ?? "GET";
    const c: CallerContext = { runtime, directory: this.#deps.directory, req, now: this.#now() };
    if (path === `${API}session` && method === "POST") {
      return signIn(c, res, { sessions: this.#sessions, limiter: this.#deps.limiter, operators: r.operators });
    }
    const found = await this.#sessions.find(req.headers);
    if (!found) throw new GatewayError(errors.consoleNotSignedIn);
    // Every change carries the session's CSRF token: a page of another site cannot read it.
    if (method !== "GET" && method !== "HEAD" && !csrfMatches(req.headers, found.record)) throw new GatewayError(errors.consoleCsrfMismatch);
    const caller = await callerOfSession(found.record, c);
    if (caller instanceof GatewayError) {
      await this.#sessions.end(found.id);
      throw caller;
    }
    if (caller.role === "operator" && !r.operators) throw new GatewayError(errors.consoleOperatorsElsewhere);
    if (path === `${API}session`) return this.#session(r, found, runtime);
    if (path.startsWith(ADMIN_API)) return this.#admin(r, caller);
    if (path === `${API}me` || path.startsWith(`${API}me/`)) return this.#me(r, caller, runtime);
    throw new GatewayError(errors.notFound, `No such console endpoint: ${method} ${path}.`);
  }

  async #session({ req, res }: ConsoleRequest, found: FoundSession, runtime: Runtime): Promise<void> {
    if (req.method === "GET") return sendApiJson(res, 200, sessionAnswer(found));
    if (req.method === "DELETE") return signOut(req, res, found, this.#sessions, runtime.server.trustProxy);
    throw new GatewayError(errors.methodNotAllowed, "/console/api/session takes GET, POST, DELETE.", { headers: { allow: "GET, POST, DELETE" } });
  }

  /** The customer's own data (me/routes.ts): the route for the path and method, with the
   * session's customer. */
  async #me(r: ConsoleRequest, caller: Customer | Operator, runtime: Runtime): Promise<void> {
    if (caller.role !== "customer") throw new GatewayError(errors.notFound, "An operator's session has no customer data: use /console/api/admin/….");
    const method = r.req.method === "HEAD" ? "GET" : r.req.method ?? "GET";
    const found = meRouteFor(r.path.slice(`${API}me`.length), method);
    if (!found) throw new GatewayError(errors.notFound, `No such console endpoint: ${r.path}.`);
    if (!found.route) {
      const allow = found.allow.join(", ");
      throw new GatewayError(errors.methodNotAllowed, `${r.path} takes ${allow}.`, { headers: { allow } });
    }
    const body = method === "GET" || method === "DELETE" ? undefined : await readJsonBody(r.req, runtime.server);
    const { service, store, usageLog, limiter, live } = this.#deps;
    const answer = await found.route.handle(
      { customer: meCustomer(caller), query: new URLSearchParams(r.query), body, now: this.#now(), requestId: r.requestId },
      { service, store, usageLog, limiter, live }, found.params,
    );
    sendApiJson(r.res, answer.status, answer.body, answer.headers);
  }

  /** /console/api/admin/X is /admin/v1/X, answered by the admin API as the session's key. */
  async #admin(r: ConsoleRequest, caller: Customer | Operator): Promise<void> {
    if (caller.role !== "operator") throw new GatewayError(errors.adminScopeMissing, "A customer's session cannot use the admin API: sign in with an admin key.");
    r.res.setHeader("cache-control", "no-store");
    await this.#deps.admin.handleAs({
      req: r.req, res: r.res, path: `/admin/v1/${r.path.slice(ADMIN_API.length)}`, query: r.query, requestId: r.requestId,
    }, caller.key);
  }
}

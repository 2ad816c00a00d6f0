// The console in tests: its front-end built once when missing (the install's own script), a
// gateway config with admin keys, a store-backed user and token made through the admin API,
// and a cookie-keeping raw HTTP client.

import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { config } from "../integration/support.js";
import { rawRequest, type RawResponse } from "../integration/support.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Builds console/build with scripts/build-console.mjs unless a build newer than every
 * file of console/src is there (a stale build would test old pages). */
export async function ensureConsoleBuilt(): Promise<void> {
  let builtAt = 0;
  try {
    builtAt = statSync(`${root}console/build/manifest.json`).mtimeMs;
  } catch {
    // not built
  }
  if (builtAt > newestUnder(`${root}console/src`)) return;
  await promisify(execFile)(process.execPath, [`${root}scripts/build-console.mjs`], { cwd: root, timeout: 60_000 });
}

function newestUnder(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    newest = Math.max(newest, e.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export const ADMIN_KEYS = {
  ops: "adm-console-ops-0123456789abcdef",
  viewer: "adm-console-viewer-0123456789ab",
} as const;

/** A gateway.yaml with `channels` (default none), a default group and two admin keys (ops: every scope). */
export function consoleYaml(admin: Record<string, unknown> = {}, channels: Record<string, unknown>[] = []): string {
  return config({ users: {}, tokens: [], channels, server: { body_timeout: "2s" } }) + stringify({
    admin: {
      ...admin,
      keys: [
        { name: "ops", key: ADMIN_KEYS.ops, scopes: ["read", "write", "billing"] },
        { name: "viewer", key: ADMIN_KEYS.viewer, scopes: ["read"] },
      ],
    },
  });
}

/** Calls the admin API with the ops key. */
export function adminCall(base: string, method: string, path: string, body?: unknown): Promise<RawResponse> {
  return rawRequest(`${base}${path}`, {
    method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${ADMIN_KEYS.ops}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
  });
}

/** Makes a stored user with `credit` and a token of theirs; answers the token's key. */
export async function customerWithToken(base: string, user: string, credit: string): Promise<string> {
  const u = await adminCall(base, "POST", "/admin/v1/users", { name: user, groups: ["default"], credit });
  if (u.status !== 201) throw new Error(`user: ${u.status} ${u.text}`);
  const t = await adminCall(base, "POST", "/admin/v1/tokens", { name: `${user}-main`, user });
  if (t.status !== 201) throw new Error(`token: ${t.status} ${t.text}`);
  return t.json.key as string;
}

/** A browser-less console client: keeps the session cookie and sends the CSRF token. */
export class ConsoleClient {
  cookie: string | undefined;
  csrf: string | undefined;

  constructor(readonly base: string) {}

  async signIn(secret: string): Promise<RawResponse> {
    const r = await this.call("POST", "/console/api/session", { secret });
    if (r.status === 200) {
      this.cookie = String(r.headers["set-cookie"]?.[0] ?? "").split(";")[0];
      this.csrf = r.json.csrf;
    }
    return r;
  }

  /** A console call; `csrf: false` leaves the header out. */
  call(method: string, path: string, body?: unknown, opts: { csrf?: boolean } = {}): Promise<RawResponse> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = this.cookie;
    if (body !== undefined) headers["content-type"] = "application/json";
    if (opts.csrf !== false && this.csrf && method !== "GET") headers["x-csrf-token"] = this.csrf;
    return rawRequest(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  }
}

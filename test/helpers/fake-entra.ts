// A fake Microsoft Entra ID token endpoint speaking the real wire format of the OAuth 2.0
// client-credentials grant: POST /{tenant}/oauth2/v2.0/token with a form body
// (grant_type=client_credentials, client_id, client_secret, scope), answered
// {"token_type":"Bearer","expires_in":…,"ext_expires_in":…,"access_token":"…"}, or refused
// with Entra's error body ({"error":"invalid_client","error_description":"AADSTS7000215: …",
// "error_codes":[…],…}). It records every mint (token, when it expires) so a fake Azure
// resource can accept only current tokens.

import type http from "node:http";
import { randomBytes } from "node:crypto";
import { sendJson, startFakeServer, type BaseReceived } from "./fake-server.js";

export const COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default";

/** An app registration the fake knows: its tenant, client id and secret. */
export interface EntraClient {
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Seconds each token issued to it lives (Entra: 3599). */
  readonly expiresInS?: number;
}

/** A token request as the fake read it. */
export interface EntraReceived extends BaseReceived {
  /** The tenant in the path, or undefined when the path is not a v2 token endpoint's. */
  readonly tenant: string | undefined;
  readonly form: URLSearchParams;
}

/** A token the fake issued. */
export interface EntraMint {
  readonly token: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface FakeEntra {
  /** The authority host (channels[].credentials.authority_host). */
  readonly url: string;
  readonly received: readonly EntraReceived[];
  readonly mints: readonly EntraMint[];
  /** Refused token requests: the OAuth error and the client id asked for. */
  readonly refusals: readonly { readonly error: string; readonly clientId: string }[];
  /** Per request: an answer to give instead (a status and JSON body, or "hang": none at
   * all), or undefined to answer as Entra does. */
  script: ((r: EntraReceived) => { readonly status: number; readonly body: unknown } | "hang" | undefined) | undefined;
  /** Whether `token` was issued here and has not expired. */
  valid(token: string): boolean;
  close(): Promise<void>;
}

const TOKEN_PATH = /^\/([^/?]+)\/oauth2\/v2\.0\/token$/;

export async function startFakeEntra(clients: readonly EntraClient[]): Promise<FakeEntra> {
  const mints: EntraMint[] = [];
  const refusals: { error: string; clientId: string }[] = [];
  const server = await startFakeServer<EntraReceived>((r, res) => answer(r, res), {
    describe: (base) => {
      const m = TOKEN_PATH.exec(base.path);
      return { ...base, tenant: m ? decodeURIComponent(m[1]) : undefined, form: new URLSearchParams(base.raw.toString("utf8")) };
    },
  });

  /** Entra's refusal: the OAuth error, an AADSTS description, and the diagnostics it adds. */
  function refuse(res: http.ServerResponse, status: number, error: string, code: number, description: string, clientId: string): void {
    refusals.push({ error, clientId });
    const trace = "0a1b2c3d-0000-4000-8000-000000000000";
    sendJson(res, status, {
      error, error_description: `AADSTS${code}: ${description} Trace ID: ${trace} Correlation ID: ${trace} Timestamp: 2026-11-27 23:30:00Z`,
      error_codes: [code], timestamp: "2026-11-27 23:30:00Z", trace_id: trace, correlation_id: trace, error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    });
  }

  function answer(r: EntraReceived, res: http.ServerResponse): void {
    const scripted = fake.script?.(r);
    if (scripted === "hang") return;
    if (scripted !== undefined) {
      sendJson(res, scripted.status, scripted.body);
      return;
    }
    const clientId = r.form.get("client_id") ?? "";
    if (r.method !== "POST" || r.tenant === undefined) {
      sendJson(res, 404, { error: "not_found" });
      return;
    }
    if (!/^application\/x-www-form-urlencoded\b/.test(String(r.headers["content-type"] ?? ""))) {
      return refuse(res, 400, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'.", clientId);
    }
    if (r.form.get("grant_type") !== "client_credentials") {
      return refuse(res, 400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.", clientId);
    }
    if (!clients.some((c) => c.tenantId === r.tenant)) {
      return refuse(res, 400, "invalid_request", 90002, `Tenant '${r.tenant}' not found.`, clientId);
    }
    const client = clients.find((c) => c.tenantId === r.tenant && c.clientId === clientId);
    if (!client) {
      return refuse(res, 400, "unauthorized_client", 700016, `Application with identifier '${clientId}' was not found in the directory.`, clientId);
    }
    if (r.form.get("client_secret") !== client.clientSecret) {
      return refuse(res, 401, "invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.", clientId);
    }
    if (r.form.get("scope") !== COGNITIVE_SERVICES_SCOPE) {
      return refuse(res, 400, "invalid_scope", 1002012, `The provided value for scope ${r.form.get("scope")} is not valid.`, clientId);
    }
    const expiresIn = client.expiresInS ?? 3599;
    const token = `eyJ0eXAiOiJKV1QifQ.${randomBytes(12).toString("base64url")}`;
    const issuedAt = Date.now();
    mints.push({ token, tenantId: client.tenantId, clientId, issuedAt, expiresAt: issuedAt + expiresIn * 1000 });
    sendJson(res, 200, { token_type: "Bearer", expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token });
  }

  const fake: FakeEntra = {
    url: server.url, received: server.received, mints, refusals, script: undefined,
    valid: (token) => mints.some((m) => m.token === token && Date.now() < m.expiresAt),
    close: () => server.close(),
  };
  return fake;
}

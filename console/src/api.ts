// The console's client for its own server: JSON over fetch, same origin, the session cookie
// sent by the browser, and the session's CSRF token on every call that changes something.

/** Who is signed in, as POST/GET /console/api/session answer. */
export interface Session {
  readonly role: "customer" | "operator";
  readonly name: string;
  readonly csrf: string;
}

/** An answer other than 2xx, with the catalogue's message. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly code?: string) {
    super(message);
  }
}

/** Calls the console API; `csrf` goes with every method but GET. */
export async function call<T>(method: string, path: string, opts: { body?: unknown; csrf?: string } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && opts.csrf) headers["x-csrf-token"] = opts.csrf;
  const res = await fetch(path, {
    method, headers, credentials: "same-origin", cache: "no-store",
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
  const text = await res.text();
  const json = text === "" ? undefined : (JSON.parse(text) as unknown);
  if (!res.ok) {
    const error = (json as { error?: { message?: string; code?: string } } | undefined)?.error;
    throw new ApiError(res.status, error?.message ?? `HTTP ${res.status}`, error?.code);
  }
  return json as T;
}

/** The session of this browser, or undefined when nobody is signed in. */
export async function currentSession(): Promise<Session | undefined> {
  try {
    return await call<Session>("GET", "/console/api/session");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}

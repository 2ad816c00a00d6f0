// Reading the admin API from a page: the answer, an error to show, or `missing` when the
// gateway has no such endpoint (404 on the path itself), so a page can hide what it lacks.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call } from "../../api.js";
import { offers, type ApiDocument } from "./logic.js";

export interface AdminRead<T> {
  readonly data?: T;
  readonly error?: string;
  readonly missing: boolean;
  readonly loading: boolean;
}

/** The console's path of an admin API path: "users?limit=20" → /console/api/admin/users?limit=20. */
export function adminPath(path: string): string {
  return `/console/api/admin/${path.replace(/^\//, "")}`;
}

/** A user-facing message for a failed call. */
export function messageOf(err: unknown): string {
  return err instanceof ApiError ? err.message : "The gateway could not be reached.";
}

/** Whether an error says the endpoint itself is absent (not a missing user or batch). */
export function isMissingEndpoint(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 404 || err.status === 405) && (err.code === undefined || err.code === "not_found" || err.code === "method_not_allowed");
}

/** GETs `path` (an admin API path) whenever it or `reload` changes; undefined path: nothing. */
export function useAdmin<T>(path: string | undefined, reload = 0): AdminRead<T> {
  const [state, setState] = useState<AdminRead<T>>({ missing: false, loading: path !== undefined });
  useEffect(() => {
    if (path === undefined) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    call<T>("GET", adminPath(path)).then(
      (data) => { if (live) setState({ data, missing: false, loading: false }); },
      (err: unknown) => {
        if (live) setState({ missing: isMissingEndpoint(err), error: messageOf(err), loading: false });
      },
    );
    return () => { live = false; };
  }, [path, reload]);
  return state;
}

/** What this gateway's admin API offers, read from its OpenAPI document: a test
 * `(method, path, query?) → boolean`, or undefined until the document is read. Unreadable,
 * it answers true (the page then meets a 404 and says so). */
export function useOffers(): ((method: string, path: string, query?: string) => boolean) | undefined {
  const doc = useAdmin<ApiDocument>("openapi.json");
  if (doc.loading) return undefined;
  if (!doc.data) return () => true;
  const d = doc.data;
  return (method, path, query) => offers(d, method, path, query);
}

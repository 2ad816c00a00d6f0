// Turns the `store:` value of gateway.yaml into an open Store, so the server and the CLI
// agree on what "sqlite:./data/gateway.db" means (relative to the config file's folder).

import { isAbsolute, resolve } from "node:path";
import { openSqliteStore } from "./sqlite.js";
import type { Store } from "./store.js";

/** How to interpret and open a store spec. */
export interface OpenStoreOptions {
  /** Folder relative sqlite paths resolve against: the config file's folder. */
  readonly baseDir: string;
  /** Refuse a sqlite file that does not exist yet instead of creating it. */
  readonly mustExist?: boolean;
}

/** A parsed store spec. */
export type StoreLocation = { readonly kind: "sqlite"; readonly path: string } | { readonly kind: "redis"; readonly url: string };

/**
 * Parses a store spec: `sqlite:<path>` (relative to `baseDir`), `sqlite::memory:` for a
 * private in-memory database, or `redis://…` / `rediss://…`. Throws on anything else.
 */
export function parseStoreSpec(spec: string, baseDir: string): StoreLocation {
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    if (!path) throw new Error(`store "${spec}": write sqlite:<path>, e.g. sqlite:./data/gateway.db`);
    if (path === ":memory:") return { kind: "sqlite", path };
    return { kind: "sqlite", path: isAbsolute(path) ? path : resolve(baseDir, path) };
  }
  if (/^rediss?:\/\//.test(spec)) return { kind: "redis", url: spec };
  throw new Error(`store "${spec}": expected sqlite:<path> or redis://host:port/db`);
}

/**
 * Opens the store named by a `store:` spec. A redis spec is accepted by the config
 * schema but not implemented yet, and throws a clear Error saying so.
 */
export function openStore(spec: string, opts: OpenStoreOptions): Store {
  const location = parseStoreSpec(spec, opts.baseDir);
  if (location.kind === "redis") throw new Error("redis store is not available yet; use sqlite:<path>");
  return openSqliteStore(location.path, { mustExist: opts.mustExist });
}

// Watches gateway.yaml for edits and calls back, debounced. Watches the file's directory
// so editors that save by writing a new file and renaming it over the old one are seen;
// never stops watching, whatever the file holds.

import { basename, dirname, resolve } from "node:path";
import { watch } from "chokidar";
import { log } from "../observability/log.js";

/** A running watch; `close` stops it and cancels a pending callback. */
export interface ConfigWatch {
  /** Resolves once the watcher sees changes (edits before this may be missed). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** Calls `onChange` once per burst of changes to `path` (after `debounceMs` of quiet). */
export function watchConfig(path: string, onChange: () => void, opts: { debounceMs?: number } = {}): ConfigWatch {
  const debounceMs = opts.debounceMs ?? 150;
  const file = resolve(path);
  const dir = dirname(file);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const watcher = watch(dir, {
    ignoreInitial: true,
    depth: 0,
    // Only the directory itself and the config file; siblings are ignored.
    ignored: (candidate: string) => resolve(candidate) !== dir && resolve(candidate) !== file,
  });
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) onChange();
    }, debounceMs);
  };
  const ready = new Promise<void>((resolveReady) => watcher.once("ready", () => resolveReady()));
  watcher.on("all", (event, changed) => {
    if (event !== "unlink" && resolve(changed) === file) schedule();
  });
  // chokidar drops a change that follows another within 50ms; raw events are not
  // throttled, so a quick second save still triggers a (debounced) reload.
  watcher.on("raw", (_event, changed) => {
    if (basename(String(changed)) === basename(file)) schedule();
  });
  watcher.on("error", (error) => log.warn("config watch error; still watching", { file: basename(file), error: String(error) }));

  return {
    ready,
    async close(): Promise<void> {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

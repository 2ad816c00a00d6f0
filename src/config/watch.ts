// Watches gateway.yaml for edits and calls back, debounced. Watches the file's directory
// so editors that save by writing a new file and renaming it over the old one are seen;
// never stops watching, whatever the file holds. File events are not always delivered (a
// Kubernetes ConfigMap swaps a symlink in another directory; bind mounts and network file
// systems send none), so the file's status is also polled: an edit is seen within
// STAT_POLL_MS whichever way it is made.

import { unwatchFile, watchFile, type Stats } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { watch } from "chokidar";
import { log } from "../observability/log.js";

/** A running watch; `close` stops it and cancels a pending callback. */
export interface ConfigWatch {
  /** Resolves once the watcher sees changes (edits before this may be missed). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** How often the file's status (through symlinks) is compared: a few stat calls a second. */
const STAT_POLL_MS = 250;

/** Calls `onChange` once per burst of changes to `path` (after `debounceMs` of quiet). */
export function watchConfig(path: string, onChange: () => void, opts: { debounceMs?: number } = {}): ConfigWatch {
  const debounceMs = opts.debounceMs ?? 50;
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
  // stat follows symlinks: a swapped target, a new inode or another size or time is an edit.
  const polled = (now: Stats, before: Stats): void => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size || now.dev !== before.dev) schedule();
  };
  watchFile(file, { interval: STAT_POLL_MS, persistent: false }, polled);

  return {
    ready,
    async close(): Promise<void> {
      closed = true;
      clearTimeout(timer);
      unwatchFile(file, polled);
      await watcher.close();
    },
  };
}

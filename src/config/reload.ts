// Reloads gateway.yaml into the RuntimeBox: skip unchanged text, compile the whole file,
// keep the old Runtime on any error, carry restart-only settings over, count every outcome.
// Reloads run one at a time; requests during one coalesce into a single follow-up. Load,
// compile and watch are config's; of runtime/ it needs only the box it swaps into.

import { readFile } from "node:fs/promises";
import { applyLogLevel, log } from "../observability/log.js";
import { configLastReloadSuccessful, configLastReloadTime, configReloadsTotal } from "../observability/metrics.js";
import type { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { ConfigError, formatIssue } from "./issues.js";
import { compileSource, sourceHashOf } from "./load.js";
import { watchConfig, type ConfigWatch } from "./watch.js";

/** Why a reload was asked for (logged). */
export type ReloadReason = "watch" | "signal" | "manual";
/** What a reload did. */
export type ReloadOutcome = "applied" | "unchanged" | "rejected";

/** Options of createReloader. */
export interface ReloaderOptions {
  path: string;
  box: RuntimeBox;
  /** Variables for ${VAR}; default: process.env at each reload. */
  env?: NodeJS.ProcessEnv;
  /** Start a file watcher that reloads on change; default true. */
  watch?: boolean;
  debounceMs?: number;
  /** Told the text of each applied config (a cluster primary sends it to its workers). */
  onApplied?: (source: string, runtime: Runtime) => void;
  /** Problems only the running gateway can see (a name the accounts store holds too): any
   * refuses the reload, as a compile error does. */
  check?: (runtime: Runtime) => Promise<readonly string[]>;
  /** Applied to each compiled Runtime before it is compared and swapped in: the command
   * line's settings (`--listen`) outlive every reload. */
  override?: (runtime: Runtime) => Runtime;
}

/** A running reloader. */
export interface Reloader {
  /** Resolves once the file watcher is active (at once without one). */
  readonly ready: Promise<void>;
  reload(reason: ReloadReason): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

function sameServer(a: Runtime, b: Runtime): boolean {
  return JSON.stringify(a.server) === JSON.stringify(b.server) && a.store === b.store && a.metricsPath === b.metricsPath
    && JSON.stringify(a.metricsListen) === JSON.stringify(b.metricsListen) && JSON.stringify(a.admin?.listen) === JSON.stringify(b.admin?.listen);
}

/** `next` with the restart-only settings (server, store, metrics path) of `running`. */
export function keepStaticSettings(next: Runtime, running: Runtime): Runtime {
  if (sameServer(next, running)) return next;
  // admin.listen is restart-only; the admin keys reload live.
  const admin = next.admin || running.admin ? { admin: { keys: next.admin?.keys ?? [], ...(running.admin?.listen ? { listen: running.admin.listen } : {}) } } : {};
  return Object.freeze({
    ...next, server: running.server, store: running.store, metricsPath: running.metricsPath, metricsListen: running.metricsListen, ...admin,
  });
}

/** Keeps restart-only settings of the running Runtime, and says so when they changed. */
function withStaticSettings(next: Runtime, running: Runtime): Runtime {
  if (sameServer(next, running)) return next;
  log.warn("server, store and metrics settings changed; they apply after a restart", {
    running: { server: running.server, store: running.store, metricsPath: running.metricsPath, metricsListen: running.metricsListen },
    configured: { server: next.server, store: next.store, metricsPath: next.metricsPath, metricsListen: next.metricsListen },
  });
  return keepStaticSettings(next, running);
}

/** Records the last load's result and time (gateway_config_last_reload_*). */
function noteLoad(ok: boolean): void {
  configLastReloadSuccessful.set(ok ? 1 : 0);
  configLastReloadTime.set(Date.now() / 1000);
}

/** Creates a reloader for `path` that swaps successful compiles into `box`. */
export function createReloader(opts: ReloaderOptions): Reloader {
  const { path, box } = opts;
  noteLoad(true); // the config the reloader starts from loaded

  /** The hash of the text last rejected: the watcher seeing it again (an editor's second
   * write, or the edit a SIGHUP already reloaded) finds it unchanged, not a second rejection
   * logged and counted. A signal or a manual reload tries it again (an env variable or a
   * file it names may have been fixed). */
  let rejectedHash: string | undefined;

  async function run(reason: ReloadReason): Promise<ReloadOutcome> {
    const outcome = await attempt(reason);
    configReloadsTotal.inc({ outcome });
    // The file as it stands loads: applied, or the running config's text (not a text rejected before).
    noteLoad(outcome !== "rejected" && rejectedHash === undefined);
    return outcome;
  }

  async function attempt(reason: ReloadReason): Promise<ReloadOutcome> {
    const running = box.current;
    let hash: string | undefined;
    try {
      const text = await readFile(path, "utf8");
      // An empty file the watcher saw is a save under way (truncated, not yet written):
      // the write's own event follows. Rejected now, it would be logged and counted as a
      // failed reload that no one made.
      if (reason === "watch" && text.trim() === "") return "unchanged";
      hash = sourceHashOf(text);
      if (hash === running.sourceHash) {
        rejectedHash = undefined;
        return "unchanged";
      }
      if (hash === rejectedHash && reason === "watch") return "unchanged";
      const compiled = compileSource(text, { path, env: opts.env ?? process.env, generation: running.generation + 1 });
      const { warnings } = compiled;
      const runtime = opts.override ? opts.override(compiled.runtime) : compiled.runtime;
      const problems = opts.check ? await opts.check(runtime) : [];
      if (problems.length > 0) throw new Error(problems.join("; "));
      const applied = withStaticSettings(runtime, running);
      box.swap(applied);
      if (applied.logLevel !== running.logLevel) applyLogLevel(applied.logLevel);
      for (const warning of warnings) log.warn(warning, { config: path });
      log.info("config reloaded", { config: path, reason, generation: runtime.generation });
      opts.onApplied?.(text, applied);
      rejectedHash = undefined;
      return "applied";
    } catch (error) {
      rejectedHash = hash;
      const issues = error instanceof ConfigError ? error.issues.map(formatIssue) : [String((error as Error)?.message ?? error)];
      log.error("config rejected; keeping the running config", { config: path, reason, generation: running.generation, issues });
      return "rejected";
    }
  }

  let inFlight: Promise<ReloadOutcome> | undefined;
  let queued: Promise<ReloadOutcome> | undefined;

  function reload(reason: ReloadReason): Promise<ReloadOutcome> {
    if (!inFlight) {
      inFlight = run(reason).finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    }
    // One follow-up covers every request made while a reload runs.
    queued ??= inFlight.then(() => {
      queued = undefined;
      return reload(reason);
    });
    return queued;
  }

  const watcher: ConfigWatch | undefined =
    opts.watch === false ? undefined : watchConfig(path, () => void reload("watch"), { debounceMs: opts.debounceMs });

  return {
    ready: watcher ? watcher.ready : Promise.resolve(),
    reload,
    async close(): Promise<void> {
      await watcher?.close();
      await queued;
      await inFlight;
    },
  };
}

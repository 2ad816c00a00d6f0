// `gateway serve`: load and compile the config, listen, reload on file change or SIGHUP,
// drain on SIGTERM/SIGINT. With server.workers > 1 this process becomes a cluster primary
// (server/cluster.ts) and its forked workers serve (server/cluster-worker.ts).

import cluster from "node:cluster";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { compileSource, ConfigError, parseListen, type CompileResult } from "../config/index.js";
import { createReloader } from "../config/reload.js";
import { applyLogLevel, log } from "../observability/log.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { runClusterPrimary } from "../server/cluster.js";
import { workerCount } from "../server/cluster-policy.js";
import { startupRefusals } from "../server/startup-policy.js";
import { runClusterWorker, type Serving } from "../server/cluster-worker.js";
import { startGateway } from "../server/server.js";
import { destroyAgents } from "../upstream/agents.js";
import { openState } from "../state/open.js";
import { nameClashes } from "../accounts/name-clash.js";
import { openAccountStore } from "../accounts/open.js";
import { UsageError } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { processIo, type CliIo } from "./format.js";

export const serveCommand: Command = {
  name: "serve",
  summary: "Serves a config: reloads it on change or SIGHUP, drains on SIGTERM or SIGINT. The default command.",
  synopsis: "gateway [serve] [options]",
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config to serve (default gateway.yaml)" },
    listen: { type: "string", value: "HOST:PORT", check: checkListen, description: "listen here instead of the config's server.listen (kept across reloads)" },
  },
  run: (flags, io) => serve(flags.values.get("config") ?? "gateway.yaml", listenOverride(flags.values.get("listen")), io),
};

/** Refuses a --listen value the config's server.listen would refuse, with the same words. */
function checkListen(value: string): void {
  try {
    parseListen(value);
  } catch (err) {
    throw new UsageError(`--listen: ${(err as Error).message}`);
  }
}

/** What --listen does to every Runtime this process serves: its address replaces
 * server.listen's; the identity without the flag. */
function listenOverride(value: string | undefined): (runtime: Runtime) => Runtime {
  if (value === undefined) return (runtime) => runtime;
  const { host, port } = parseListen(value);
  return (runtime) => Object.freeze({ ...runtime, server: Object.freeze({ ...runtime.server, host, port }) });
}

/** Runs `gateway serve`: serves until a termination signal; resolves to the exit code. */
export async function runServe(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(serveCommand, args, io);
}

/** Serves `path` until a termination signal, `override` applied to each of its Runtimes;
 * resolves to the exit code. */
async function serve(path: string, override: (runtime: Runtime) => Runtime, io: CliIo): Promise<number> {
  // A cluster worker runs with the primary's argv, so it arrives here with the same path and
  // flags; its later reloads keep the server settings it started with.
  if (cluster.isWorker) {
    return runClusterWorker({ path, start: (box, metricsText) => (box.swap(override(box.current)), startServing(box, metricsText)) });
  }
  let source: string;
  let compiled: CompileResult;
  try {
    source = await readConfig(path);
    compiled = compileSource(source, { path });
    compiled = { ...compiled, runtime: override(compiled.runtime) };
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(err.message + "\n");
      return 1;
    }
    throw err;
  }
  applyLogLevel(compiled.runtime.logLevel);
  for (const warning of compiled.warnings) log.warn(warning);
  // Refused from the config alone, as `gateway check` refuses it, before anything starts.
  const refusals = startupRefusals(compiled.runtime, dirname(compiled.runtime.sourcePath));
  if (refusals.length > 0) {
    for (const refusal of refusals) io.err(`${path}: ${refusal}\n`);
    return 1;
  }
  const workers = workerCount(compiled.runtime.server.workers);
  if (workers > 1) return runClusterPrimary({ path, source, runtime: compiled.runtime, workers, override });

  const box = new RuntimeBox(compiled.runtime);
  let serving: LoneServing;
  try {
    serving = await startServing(box);
  } catch (err) {
    io.err(`${path}: ${(err as Error).message}\n`);
    return 1;
  }
  const reloader = createReloader({ path, box, override, check: serving.check });
  log.info("gateway listening", { url: serving.url, config: path });

  process.on("SIGHUP", () => void reloader.reload("signal"));
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info("draining", { signal, timeoutMs: box.current.server.drainTimeoutMs });
      await reloader.close();
      const { forced } = await serving.stop();
      log.info("stopped", { forced });
      resolve(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  });
}

/** A gateway served by this process: where, and what a reload must also pass (no name
 * that the accounts store holds too). */
type LoneServing = Serving & { readonly url: string; readonly check: (runtime: Runtime) => Promise<readonly string[]> };

/** The config file's text; an unreadable file is a ConfigError like any other problem. */
async function readConfig(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError([{ file: path, line: 0, column: 0, path: "", message: `cannot read the file: ${(error as Error).message}` }]);
  }
}

/**
 * Opens the configured store and starts the gateway on `box`: what a lone process and
 * each cluster worker do. Throws an Error naming the problem when the store cannot open.
 */
async function startServing(box: RuntimeBox, metricsText?: () => Promise<string>): Promise<LoneServing> {
  let state;
  const spec = { store: box.current.store, ledger: box.current.ledger };
  const baseDir = dirname(box.current.sourcePath);
  try {
    state = await openState(spec, { baseDir, upstreamTimeoutMs: box.current.server.upstreamTimeoutMs, retention: box.current.usageRetention });
  } catch (err) {
    throw new Error(`store: ${(err as Error).message}`);
  }
  let accountStore;
  try {
    accountStore = await openAccountStore(spec, { baseDir });
  } catch (err) {
    await state.close();
    throw new Error(`store: accounts: ${(err as Error).message}`);
  }
  const clashes = await nameClashes(accountStore, box.current).catch(async (err: unknown) => {
    await Promise.all([state.close(), accountStore.close()]);
    throw new Error(`store: accounts: ${(err as Error).message}`);
  });
  if (clashes.length > 0) {
    await Promise.all([state.close(), accountStore.close()]);
    throw new Error(clashes.join("\n"));
  }
  // A cluster's primary serves metrics.listen, once for the whole group.
  const gateway = await startGateway({ box, state, accountStore, metricsText, opsServedElsewhere: cluster.isWorker });
  return {
    url: gateway.url,
    check: (runtime) => nameClashes(accountStore, runtime),
    degraded: () => state.health().degraded,
    async stop() {
      const { forced } = await gateway.drain();
      destroyAgents();
      await Promise.all([state.close(), accountStore.close()]);
      return { forced };
    },
  };
}

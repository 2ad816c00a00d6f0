// `gateway serve`: load and compile the config, listen, reload on file change or SIGHUP,
// drain on SIGTERM/SIGINT.

import { dirname } from "node:path";
import { ConfigError, loadConfigFile } from "../config/index.js";
import { log } from "../observability/log.js";
import { RuntimeBox } from "../runtime/box.js";
import { createReloader } from "../runtime/reload.js";
import { startGateway } from "../server/server.js";
import { destroyAgents } from "../upstream/agents.js";
import { openStore } from "../state/open.js";
import { flag } from "./args.js";

/** Serves until a termination signal; resolves to the exit code. */
export async function runServe(args: string[]): Promise<number> {
  const path = flag(args, "config") ?? "gateway.yaml";
  let compiled;
  try {
    compiled = await loadConfigFile(path);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + "\n");
      return 1;
    }
    throw err;
  }
  for (const warning of compiled.warnings) log.warn(warning);
  const box = new RuntimeBox(compiled.runtime);
  let store;
  try {
    store = openStore(box.current.store, { baseDir: dirname(box.current.sourcePath) });
  } catch (err) {
    process.stderr.write(`${path}: store: ${(err as Error).message}\n`);
    return 1;
  }
  const gateway = await startGateway({ box, store });
  const reloader = createReloader({ path, box });
  log.info("gateway listening", { url: gateway.url, config: path });

  process.on("SIGHUP", () => void reloader.reload("signal"));
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info("draining", { signal, timeoutMs: box.current.server.drainTimeoutMs });
      await reloader.close();
      const { forced } = await gateway.drain();
      destroyAgents();
      store.close();
      log.info("stopped", { forced });
      resolve(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  });
}

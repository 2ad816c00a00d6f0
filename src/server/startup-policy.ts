// What `gateway serve` refuses to start, known from the config alone (before connecting to
// anything): one list, so `gateway check` refuses exactly the configs serve refuses, with
// the same words.

import type { Runtime } from "../runtime/types.js";
import { stateRefusal } from "../state/open.js";
import { severalWorkersRefusal, workerCount } from "./cluster-policy.js";

/**
 * Why serve would refuse `runtime`, each as the line it prints after the file's name; empty
 * when it would start (servers that do not answer are found only by starting). `baseDir`:
 * the config file's folder, which sqlite paths are relative to.
 */
export function startupRefusals(runtime: Runtime, baseDir: string): string[] {
  const refusals: string[] = [];
  const workers = severalWorkersRefusal(runtime, workerCount(runtime.server.workers));
  if (workers) refusals.push(workers);
  const state = stateRefusal({ store: runtime.store, ledger: runtime.ledger }, baseDir);
  if (state) refusals.push(`store: ${state}`);
  return refusals;
}

// Reloads the gateway under load: every few seconds gateway.yaml is rewritten with a
// harmless change (see renderConfig's revision), in turn saved in place, saved by a rename
// (as editors do), or saved and followed at once by SIGHUP.

import { rename, writeFile } from "node:fs/promises";

export type ReloadMethod = "save in place" | "save by rename" | "save + SIGHUP";
const METHODS: readonly ReloadMethod[] = ["save in place", "save by rename", "save + SIGHUP"];

export interface Reloads {
  /** Rewrites done, by method. */
  readonly done: Map<ReloadMethod, number>;
  /** The revision the file holds now. */
  revision(): number;
  stop(): Promise<void>;
}

export function startReloads(o: { file: string; everyMs: number; pid: number; render: (revision: number) => string }): Reloads {
  const done = new Map<ReloadMethod, number>(METHODS.map((m) => [m, 0]));
  let revision = 0;
  let running: Promise<void> = Promise.resolve();
  const once = async () => {
    const method = METHODS[revision % METHODS.length];
    revision++;
    const text = o.render(revision);
    if (method === "save by rename") {
      await writeFile(`${o.file}.tmp`, text);
      await rename(`${o.file}.tmp`, o.file);
    } else {
      await writeFile(o.file, text);
      if (method === "save + SIGHUP") process.kill(o.pid, "SIGHUP");
    }
    done.set(method, (done.get(method) ?? 0) + 1);
  };
  const timer = setInterval(() => { running = running.then(once, once); }, o.everyMs);
  return {
    done,
    revision: () => revision,
    stop: async () => { clearInterval(timer); await running; },
  };
}

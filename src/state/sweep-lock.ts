// One retention sweep at a time over a SQLite file shared by several processes (a cluster's
// workers): a lock file beside it holding the sweeper's pid. A lock left by a process that
// is gone is taken over.

import { readFileSync, rmSync, writeFileSync } from "node:fs";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function create(path: string): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Takes the lock at `path`: its release, or undefined when a live process holds it. */
export function takeLockFile(path: string): (() => void) | undefined {
  if (!create(path)) {
    let holder = NaN;
    try {
      holder = Number(readFileSync(path, "utf8"));
    } catch {
      // released meanwhile
    }
    if (Number.isInteger(holder) && holder > 0 && alive(holder)) return undefined;
    rmSync(path, { force: true });
    if (!create(path)) return undefined; // another process took it over first
  }
  return () => rmSync(path, { force: true });
}

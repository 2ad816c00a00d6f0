// CPU time of each thread of a process, from Linux's /proc/<pid>/task: which threads a load
// keeps busy (the event loop, V8's GC and compiler helpers, libuv, the usage-log writer).

import { readdirSync, readFileSync } from "node:fs";

export interface ThreadCpu {
  /** The thread's name (Node 20 names most of its threads "node"). */
  readonly name: string;
  /** CPU time so far, in nanoseconds (schedstat: finer than stat's clock ticks). */
  readonly ns: number;
}

/** CPU time so far of each thread of process `pid`, by thread id. */
export function threadCpu(pid: number): Map<string, ThreadCpu> {
  const out = new Map<string, ThreadCpu>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      out.set(tid, { name, ns });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

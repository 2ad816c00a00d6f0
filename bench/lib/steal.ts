// Time the hypervisor took from a CPU ("steal" in /proc/stat): on a VM sharing its host, a
// round measured while the host runs other guests says more about the host than about the
// proxy. Each round reports the share of its CPU's time that was stolen.

import { readFileSync } from "node:fs";

export interface CpuTimes {
  readonly steal: number;
  readonly total: number;
}

/** Cumulative jiffies of one CPU (or of all CPUs when `cpu` is undefined); undefined
 * where /proc/stat does not exist. */
export function cpuTimes(cpu?: number): CpuTimes | undefined {
  let stat: string;
  try {
    stat = readFileSync("/proc/stat", "utf8");
  } catch {
    return undefined;
  }
  const name = cpu === undefined ? "cpu" : `cpu${cpu}`;
  const line = stat.split("\n").find((l) => l.startsWith(name + " "));
  if (!line) return undefined;
  // user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: v[7] ?? 0, total: v.reduce((a, b) => a + b, 0) };
}

/** Share (0..1) of the CPU's time between two readings that the host took; NaN unknown. */
export function stolenShare(before: CpuTimes | undefined, after: CpuTimes | undefined): number {
  if (!before || !after || after.total <= before.total) return Number.NaN;
  return (after.steal - before.steal) / (after.total - before.total);
}

// Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`): self time by
// function and by file, and total (inclusive) time for functions in src/.
// Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25] [function name: show its callers]
// PROFILE_LAST_S=<s>: only the profile's last <s> seconds (the measured run, not the
// start-up and module loading before it).

import { readFileSync } from "node:fs";

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const [file, topArg, callersOf] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-summary.ts <file.cpuprofile> [top]");
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
const sampledUs = profile.timeDeltas.reduce((a, b) => a + b, 0);
const fromUs = process.env.PROFILE_LAST_S ? sampledUs - 1e6 * Number(process.env.PROFILE_LAST_S) : 0;
let atUs = 0;
profile.samples.forEach((id, i) => {
  atUs += profile.timeDeltas[i] ?? 0;
  if (atUs >= fromUs) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const idle = new Set(["(idle)", "(program)"]);
let totalUs = 0, busyUs = 0;
for (const [id, us] of selfUs) {
  totalUs += us;
  if (!idle.has(byId.get(id)!.callFrame.functionName)) busyUs += us;
}

// dist/ (the compiled gateway the bench runs by default) is shown as its src/ counterpart.
const short = (url: string) => url.replace(/^file:\/\/.*?\/node_modules\/\.bench\/[^/]+\/dist\//, "src/").replace(/^file:\/\/.*?\/(src|dist|bench|test|node_modules)\//, "$1/").replace(/^dist\//, "src/").replace(/^node:/, "node:");
const label = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${short(f.url)}`;

const callers = new Map<string, number>();
const selfByFn = new Map<string, number>(), selfByFile = new Map<string, number>(), inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const f = byId.get(id)!.callFrame;
  if (idle.has(f.functionName)) continue;
  if (callersOf && f.functionName === callersOf) {
    const chain: string[] = [];
    for (let cur = parent.get(id); cur !== undefined && chain.length < Number(process.env.CALLER_DEPTH ?? 6); cur = parent.get(cur)) chain.push(label(byId.get(cur)!.callFrame));
    callers.set(chain.join(" < "), (callers.get(chain.join(" < ")) ?? 0) + us);
  }
  selfByFn.set(label(f), (selfByFn.get(label(f)) ?? 0) + us);
  const fileKey = f.url ? short(f.url) : f.functionName;
  selfByFile.set(fileKey, (selfByFile.get(fileKey) ?? 0) + us);
  // inclusive time for src/ frames: walk up, counting each label once per sample
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur)!.callFrame;
    if (!/\/(src|dist)\//.test(cf.url) || (cf.url.includes("/node_modules/") && !cf.url.includes("/node_modules/.bench/"))) continue;
    const l = label(cf);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + us);
  }
}

const pct = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
};
console.log(`${file}: ${(totalUs / 1e6).toFixed(1)} s sampled, ${(busyUs / 1e6).toFixed(1)} s busy (percentages are of busy time)`);
print("self time by function", selfByFn);
print("self time by file", selfByFile);
print("inclusive time, src/ functions", inclusive);
if (callersOf) print(`callers of ${callersOf}`, callers);

// Summarises an allocation profile written by the bench's gateway child with
// BENCH_HEAP_PROFILE=<file> (see bench/children/gateway.ts): bytes allocated per request, by
// the function that allocated them and by the innermost gateway function on the stack (what
// our code is answerable for, including what it asks node and undici to allocate).
// Usage: npx tsx bench/heap-summary.ts <file> [top=25]
// Functions the JIT inlined are counted in their caller.

import { readFileSync } from "node:fs";

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface Node { callFrame: CallFrame; selfSize: number; children?: Node[] }
interface Written { requests: number; promotedOnly: boolean; profile: { head: Node } }

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: heap-summary.ts <file> [top]");
const top = Number(topArg ?? 25);
const { requests, promotedOnly, profile } = JSON.parse(readFileSync(file, "utf8")) as Written;

// A build for bench/ab.ts lives under node_modules/.bench/<name>/dist: it is the gateway's code.
const short = (url: string) => url.replace(/^file:\/\/.*?\/node_modules\/\.bench\/[^/]+\/dist\//, "src/").replace(/^file:\/\/.*?\/(src|dist|node_modules)\//, "$1/");
const label = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${short(f.url)}:${f.lineNumber + 1}`;
const ours = (f: CallFrame) => /\/(src|dist)\//.test(f.url) && (!f.url.includes("/node_modules/") || f.url.includes("/node_modules/.bench/"));

const bySelf = new Map<string, number>(), byOurs = new Map<string, number>();
let total = 0;
const walk = (node: Node, innermostOurs: string) => {
  const here = ours(node.callFrame) ? label(node.callFrame) : innermostOurs;
  if (node.selfSize > 0) {
    total += node.selfSize;
    const l = label(node.callFrame);
    bySelf.set(l, (bySelf.get(l) ?? 0) + node.selfSize);
    byOurs.set(here, (byOurs.get(here) ?? 0) + node.selfSize);
  }
  for (const child of node.children ?? []) walk(child, here);
};
walk(profile.head, "(outside the gateway's code)");

const perRequest = (bytes: number) => `${Math.round(bytes / requests).toLocaleString("en-US").padStart(7)} B/req`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, bytes] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${perRequest(bytes)}  ${k}`);
};
console.log(`${file}: ${requests} requests, ${perRequest(total).trim()} ${promotedOnly ? "outlived minor GCs" : "allocated"}`);
print("by the function that allocated", bySelf);
print("by the innermost gateway function on the stack", byOurs);

// A timeline of each request the gateway child serves, taken from outside the gateway's
// code: node's and undici's diagnostics channels, the response's write calls and the
// journal's write(2). Meant for one connection (requests in sequence), where the steps of
// one request do not interleave with another's; `bench/one-conn.ts` reads what it writes.
// BENCH_TRACE=<file> in the gateway or bare-proxy child turns it on; the file is written
// when it stops. The bare proxy's upstream call is node:http's (no create/sent/end events:
// its "upstream-head" is node's http.client.response.finish, published with the head).

import diagnostics from "node:diagnostics_channel";
import fs from "node:fs";
import type { ServerResponse } from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { performance } from "node:perf_hooks";

/** The steps a request's timeline records, in the order they happen on a chat request. */
export const steps = [
  "start", "upstream-create", "upstream-sent", "upstream-head", "upstream-end", "journal-write", "res-end", "res-finish",
] as const;
export type Step = (typeof steps)[number];

/** What the trace file holds: per step, the µs after "start" of each request that had it. */
export interface TraceFile {
  readonly requests: number;
  readonly sinceStart: Record<Step, number[]>;
  /** µs from one request's finish to the next one's start (client, sockets, parsing). */
  readonly gaps: number[];
}

/** Starts tracing; returns the function that writes what it saw to `file`. */
export function startTrace(file: string): () => void {
  const sinceStart = Object.fromEntries(steps.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
  const gaps: number[] = [];
  let started = -1;
  let lastFinish = -1;
  let requests = 0;
  const mark = (step: Step) => {
    if (started >= 0) sinceStart[step].push(performance.now() * 1000 - started);
  };
  diagnostics.subscribe("http.server.request.start", (m) => {
    const now = performance.now() * 1000;
    if (lastFinish >= 0) gaps.push(now - lastFinish);
    started = now;
    requests++;
    const res = (m as { response: ServerResponse }).response;
    const end = res.end;
    res.end = function (this: ServerResponse, ...args: unknown[]) {
      mark("res-end");
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse["end"];
  });
  diagnostics.subscribe("http.server.response.finish", () => {
    mark("res-finish");
    lastFinish = performance.now() * 1000;
  });
  diagnostics.subscribe("undici:request:create", () => mark("upstream-create"));
  diagnostics.subscribe("http.client.request.start", () => mark("upstream-create"));
  diagnostics.subscribe("http.client.response.finish", () => mark("upstream-head"));
  diagnostics.subscribe("undici:request:bodySent", () => mark("upstream-sent"));
  diagnostics.subscribe("undici:request:headers", () => mark("upstream-head"));
  diagnostics.subscribe("undici:request:trailers", () => mark("upstream-end"));
  // The journal writes with fs.writeSync (imported by name: the ESM binding is resynced).
  const writeSync = fs.writeSync;
  fs.writeSync = function (this: unknown, ...args: unknown[]) {
    const n = (writeSync as (...a: unknown[]) => number).apply(this, args);
    mark("journal-write");
    return n;
  } as typeof fs.writeSync;
  syncBuiltinESMExports();
  return () => {
    const out: TraceFile = { requests, sinceStart, gaps };
    fs.writeFileSync(file, JSON.stringify(out));
  };
}

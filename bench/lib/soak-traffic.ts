// The soak's clients: N concurrent loops over every route, JSON and stream, with a share
// of client aborts and of malformed bodies; each outcome is sorted into expected ones and
// errors, tallied per route cell, and every answer's request id is kept for the billing check.

import http from "node:http";
import { send, type AbortPlan, type Outcome } from "./soak-client.js";
import {
  MALFORMED_KINDS, ROUTES, buildMalformed, buildRequest, malformedApplies, routeMode,
  type MalformedKind, type Route,
} from "./soak-requests.js";
import type { Answer } from "./soak-lag.js";
import { MODELS, TOKENS, type SoakToken } from "./soak-world.js";

export interface TrafficOptions {
  readonly base: URL;
  readonly concurrency: number;
  /** Shares of requests (0..1): streamed; cut off by the client; with a malformed body. */
  readonly streamShare: number;
  readonly abortShare: number;
  readonly malformedShare: number;
  readonly timeoutMs: number;
}

/** What the client saw of one answer that carried a request id. */
export interface Seen {
  readonly status: number;
  readonly complete: boolean;
  readonly abortedByClient: boolean;
  /** How the client left, when it did. */
  readonly abortKind?: AbortPlan["kind"];
  readonly malformed: boolean;
  readonly cell: string;
  readonly token: string;
  readonly model: string;
}

export interface CellTally { requests: number; complete: number; aborted: number; malformed: number; errors: number }

export class TrafficTally {
  readonly cells = new Map<string, CellTally>();
  /** Outcomes that are not the expected ones, by kind. */
  readonly errors = new Map<string, number>();
  /** Outcomes that are by design: client aborts, malformed bodies' 400s. */
  readonly expected = new Map<string, number>();
  /** By request id. */
  readonly seen = new Map<string, Seen>();
  /** A few request ids per error kind, for reproduction. */
  readonly examples = new Map<string, string[]>();
  total = 0;
  /** Requests that got a whole answer (200, complete). */
  complete = 0;
  /** Ids the gateway sent twice (must not happen). */
  duplicateIds = 0;
  /** Whole answers received since the lag monitor last took them. */
  #answers: Answer[] = [];

  /** Whole answers received since the last call. */
  takeAnswers(): Answer[] {
    const taken = this.#answers;
    this.#answers = [];
    return taken;
  }

  answered(answer: Answer): void {
    this.#answers.push(answer);
  }

  cell(key: string): CellTally {
    let c = this.cells.get(key);
    if (!c) this.cells.set(key, (c = { requests: 0, complete: 0, aborted: 0, malformed: 0, errors: 0 }));
    return c;
  }

  count(map: Map<string, number>, kind: string, id?: string): void {
    map.set(kind, (map.get(kind) ?? 0) + 1);
    if (map === this.errors) {
      const list = this.examples.get(kind) ?? [];
      if (list.length < 3) list.push(id ?? "(no request id)");
      this.examples.set(kind, list);
    }
  }
}

export const cellKey = (route: Route, stream: boolean) =>
  `${route.protocol} ${routeMode(route)} ${stream ? "stream" : "json"}`;

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

function abortPlan(stream: boolean): AbortPlan {
  const r = Math.random();
  if (r < 0.2) return { kind: "mid-body" };
  if (stream && r < 0.75) return { kind: "mid-stream", afterChunks: 1 + Math.floor(Math.random() * 3) };
  return { kind: "before-answer", afterMs: Math.floor(Math.random() * 25) };
}

/** Sorts one outcome into the tally. */
function tallyOutcome(t: TrafficTally, cell: string, plan: AbortPlan, malformed: MalformedKind | undefined, o: Outcome,
  token: SoakToken, model: string): void {
  const c = t.cell(cell);
  c.requests++;
  t.total++;
  if (o.requestId !== undefined && o.status !== undefined) {
    if (t.seen.has(o.requestId)) t.duplicateIds++;
    t.seen.set(o.requestId, {
      status: o.status, complete: o.complete, abortedByClient: o.abortedByClient, malformed: malformed !== undefined,
      abortKind: o.abortedByClient ? plan.kind : undefined,
      cell, token: token.name, model,
    });
  }
  const status = o.status === undefined ? "no answer" : `${o.status}${o.errorCode ? ` ${o.errorCode}` : ""}`;
  if (malformed) {
    c.malformed++;
    if (o.status === 400) t.count(t.expected, `400 ${o.errorCode} (malformed: ${malformed})`);
    else { c.errors++; t.count(t.errors, `malformed ${malformed} answered ${o.transportError ?? status}`, o.requestId); }
    return;
  }
  if (o.abortedByClient) {
    c.aborted++;
    if (o.status !== undefined && o.status !== 200) { c.errors++; t.count(t.errors, `${status} (before a planned ${plan.kind} abort)`, o.requestId); }
    else t.count(t.expected, `client abort ${plan.kind}${o.status === 200 ? " after 200 head" : ""}`);
    return;
  }
  if (o.complete && !o.streamError) {
    c.complete++;
    t.complete++;
    return;
  }
  c.errors++;
  const what = o.transportError !== undefined ? `transport: ${o.transportError}${o.status ? ` after ${o.status} head` : ""}`
    : o.streamError ? "200 stream with an error event"
    : o.truncated ? `200 ${cell.endsWith("stream") ? "stream without its ending" : "JSON not a complete answer"}`
    : status;
  t.count(t.errors, what, o.requestId);
}

/** Runs the client loops until `stopped()` says so (checked between requests); returns when all have ended. */
export async function runTraffic(o: TrafficOptions, tally: TrafficTally, stopped: () => boolean): Promise<void> {
  const loop = async (i: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const token = TOKENS[i % TOKENS.length];
    const sendOptions = { base: o.base, agent, timeoutMs: o.timeoutMs };
    while (!stopped()) {
      const route = pick(ROUTES);
      const model = MODELS[route.model].name;
      const r = Math.random();
      if (r < o.malformedShare) {
        const kind = pick(MALFORMED_KINDS.filter((k) => malformedApplies(route, k)));
        const outcome = await send(buildMalformed(route, token, kind), { kind: "none" }, sendOptions);
        tallyOutcome(tally, cellKey(route, false), { kind: "none" }, kind, outcome, token, model);
        continue;
      }
      const stream = Math.random() < o.streamShare;
      const plan = r < o.malformedShare + o.abortShare ? abortPlan(stream) : { kind: "none" as const };
      const sentAt = Date.now();
      const outcome = await send(buildRequest(route, token, stream), plan, sendOptions);
      tallyOutcome(tally, cellKey(route, stream), plan, undefined, outcome, token, model);
      if (outcome.requestId !== undefined && outcome.status === 200 && outcome.complete && !outcome.abortedByClient && !outcome.streamError) {
        tally.answered({ id: outcome.requestId, sentAt, answeredAt: Date.now() });
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, i) => loop(i)));
}

// The soak's verdicts on money: nothing left reserved once traffic stops (the gateway's
// gauge, else a balance probe), and after SIGTERM the usage log against the spend counters
// and against what each client saw, to the nano-unit.

import { storeModule } from "./soak-gateway.js";
import type { UsageEntry } from "../../src/state/store.js";
import type { Usage } from "../../src/protocols/usage.js";
import { hasMetric, metricSum, scrape } from "./soak-metrics.js";
import type { TrafficTally } from "./soak-traffic.js";
import {
  MODELS, TOKENS, USERS, creditNano, expectedCostNano, modelByName, nanoPerOutputToken, type UserName,
} from "./soak-world.js";

/** One verdict line: pass, fail, or (undefined) not checked. */
export interface Check {
  readonly name: string;
  readonly pass: boolean | undefined;
  readonly detail: string;
}

const check = (name: string, pass: boolean | undefined, detail: string): Check => ({ name, pass, detail });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the gateway reports no request in flight but the scrape itself; returns what it last saw. */
export async function waitIdle(base: URL, timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  let inflight: number | undefined;
  while (Date.now() < deadline) {
    inflight = metricSum(await scrape(base), "gateway_inflight_requests");
    if (inflight === undefined || inflight <= 1) return inflight;
    await sleep(100);
  }
  return inflight;
}

/**
 * "Nothing left reserved" while the gateway still runs, traffic stopped: the
 * gateway_reservations_held gauge when the gateway has it; and a balance probe (as in
 * test/integration/crash.test.ts): a request needing more than the balance is refused with
 * the remaining balance, which must be credit − the store's spend; a request whose
 * pre-deduction needs all but a few nano of it must then succeed. The probe's requests are
 * added to `tally.seen` so the log checks account for them.
 */
export async function checkNothingReserved(base: URL, dbPath: string, tally: TrafficTally): Promise<Check[]> {
  const checks: Check[] = [];
  const metrics = await scrape(base);
  const held = metricSum(metrics, "gateway_reservations_held");
  checks.push(held === undefined && !hasMetric(metrics, "gateway_reservations_held")
    ? check("gateway_reservations_held = 0 when idle", undefined, "metric not exposed by this gateway build: not checked")
    : check("gateway_reservations_held = 0 when idle", (held ?? 0) === 0, `gauge reads ${held ?? "(no sample)"}`));

  const token = TOKENS.find((t) => t.user === "alice")!;
  const model = MODELS.gpt;
  const perOutput = nanoPerOutputToken(model, token.group);
  const post = async (maxTokens: number) => {
    const res = await fetch(new URL("/v1/chat/completions", base), {
      method: "POST", signal: AbortSignal.timeout(20_000),
      headers: { authorization: `Bearer ${token.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: model.name, messages: [{ role: "user", content: "balance probe" }], max_tokens: maxTokens }),
    });
    const text = await res.text();
    const id = res.headers.get("x-gateway-request-id") ?? undefined;
    if (id) {
      tally.seen.set(id, {
        status: res.status, complete: res.status === 200, abortedByClient: false, malformed: false,
        cell: "probe", token: token.name, model: model.name,
      });
    }
    return { status: res.status, text };
  };

  const huge = 1_000_000_000_000;
  const refused = await post(huge);
  const m = /remaining balance is (\d+(?:\.\d+)?), but this request requires a pre-deduction of (\d+(?:\.\d+)?)/.exec(refused.text);
  if (refused.status !== 402 || !m) {
    checks.push(check("balance probe", undefined, `expected a 402 stating the balance, got ${refused.status} ${refused.text.slice(0, 200)}: not checked`));
    return checks;
  }
  const remaining = decimalToNano(m[1]);
  const required = decimalToNano(m[2]);
  await sleep(300); // the gateway's group commit (10 ms) has long passed
  const store = (await storeModule()).openSqliteStore(dbPath, { mustExist: true });
  const spent = store.spentByUser(token.user);
  store.close();
  const expected = creditNano(token.user) - spent;
  checks.push(check("balance probe: remaining = credit − spent (nothing reserved)", remaining === expected,
    `gateway says ${remaining} nano left; credit ${creditNano(token.user)} − store spend ${spent} = ${expected}`));

  const inputPart = required - BigInt(huge) * perOutput;
  const maxTokens = (remaining - inputPart) / perOutput;
  const big = await post(Number(maxTokens));
  checks.push(check("balance probe: a request reserving all but <1 token's price of the balance succeeds", big.status === 200,
    `max_tokens ${maxTokens} (reserves ${inputPart + maxTokens * perOutput} of ${remaining} nano): HTTP ${big.status}` +
    (big.status === 200 ? "" : ` ${big.text.slice(0, 200)}`)));
  return checks;
}

/** "0.0015" → 1500000n. */
function decimalToNano(decimal: string): bigint {
  const [int, frac = ""] = decimal.split(".");
  return BigInt(int + frac.padEnd(9, "0").slice(0, 9));
}

const sameUsage = (a: Usage, b: Usage) =>
  a.input === b.input && a.cacheRead === b.cacheRead && a.cacheWrite === b.cacheWrite && a.output === b.output && a.reasoning === b.reasoning;
const showUsage = (x: Usage) => `in ${x.input} cr ${x.cacheRead} cw ${x.cacheWrite} out ${x.output} (r ${x.reasoning})`;

/** Facts about the usage log, for the report. */
export interface LogFacts {
  readonly entries: number;
  readonly sumNano: bigint;
  readonly byStatus: Map<string, number>;
  readonly estimated: number;
  readonly estimatedFromClientAborts: number;
}

/** After SIGTERM: the usage log against the spend counters and the client's view. */
export async function checkUsageLog(dbPath: string, tally: TrafficTally): Promise<{ checks: Check[]; facts: LogFacts }> {
  const store = (await storeModule()).openSqliteStore(dbPath, { mustExist: true });
  try {
    const entries = store.logs({ limit: 100_000_000 });
    const checks: Check[] = [];
    const sum = (xs: readonly UsageEntry[]) => xs.reduce((s, e) => s + e.costNano, 0n);
    const total = sum(entries);

    const ids = new Map<string, UsageEntry>();
    let duplicates = 0;
    for (const e of entries) {
      if (ids.has(e.requestId)) duplicates++;
      ids.set(e.requestId, e);
    }
    checks.push(check("one usage-log entry per request id", duplicates === 0 && tally.duplicateIds === 0,
      `${entries.length} entries, ${duplicates} duplicate ids in the log, ${tally.duplicateIds} ids the client got twice`));

    const users = Object.keys(USERS) as UserName[];
    const userSpend = users.map((u) => store.spentByUser(u));
    const tokenSpend = TOKENS.map((t) => store.spentByToken(t.name));
    const spendRows = store.spend("user", {});
    const userSum = userSpend.reduce((a, b) => a + b, 0n);
    const tokenSum = tokenSpend.reduce((a, b) => a + b, 0n);
    const rowSum = spendRows.reduce((a, r) => a + r.costNano, 0n);
    checks.push(check("Σ usage log = Σ users' spend = Σ tokens' spend = spend report (nano)",
      total === userSum && total === tokenSum && total === rowSum,
      `log ${total}, users ${userSum} (${users.map((u, i) => `${u} ${userSpend[i]}`).join(", ")}), tokens ${tokenSum}, spend("user") ${rowSum}`));
    const perUser = users.map((u, i) => [u, sum(entries.filter((e) => e.user === u)), userSpend[i]] as const);
    checks.push(check("per user: Σ its log entries = its spend", perUser.every(([, a, b]) => a === b),
      perUser.map(([u, a, b]) => `${u} ${a} vs ${b}`).join("; ")));
    const perToken = TOKENS.map((t, i) => [t.name, sum(entries.filter((e) => e.token === t.name)), tokenSpend[i]] as const);
    checks.push(check("per token: Σ its log entries = its spend", perToken.every(([, a, b]) => a === b),
      perToken.map(([t, a, b]) => `${t} ${a} vs ${b}`).join("; ")));

    // What the client saw, against the log.
    const missing: string[] = [];
    const wrong: string[] = [];
    const chargedErrors: string[] = [];
    let seen200 = 0;
    let malformedCharged = 0;
    for (const [id, s] of tally.seen) {
      const e = ids.get(id);
      if (s.malformed) {
        if (e && e.costNano > 0n) malformedCharged++;
        continue;
      }
      if (s.status >= 400 && e && e.costNano > 0n) chargedErrors.push(`${id} (${s.status}, ${e.costNano} nano${e.estimated ? " estimated" : ""})`);
      if (s.status !== 200) continue;
      seen200++;
      if (!e) { missing.push(id); continue; }
      if (e.status !== 200 || e.costNano <= 0n) wrong.push(`${id}: client got 200, log has status ${e.status} cost ${e.costNano}`);
      else if (s.complete && e.estimated) wrong.push(`${id}: client got the whole answer, log has an estimate`);
    }
    checks.push(check("every 200 the client got has its entry, status 200, cost > 0",
      missing.length === 0 && wrong.length === 0,
      `${seen200} 200s seen (${tally.complete} complete); ${missing.length} missing${missing.length ? ` e.g. ${missing.slice(0, 3).join(", ")}` : ""}; ` +
      `${wrong.length} wrong${wrong.length ? `: ${wrong.slice(0, 3).join("; ")}` : ""}`));
    checks.push(check("no charge for an answer the client got as an error (4xx/5xx)", chargedErrors.length === 0,
      `${chargedErrors.length} charged${chargedErrors.length ? ` e.g. ${chargedErrors.slice(0, 3).join(", ")}` : ""}`));
    checks.push(check("malformed bodies cost nothing", malformedCharged === 0, `${malformedCharged} charged`));

    // Every exact (non-estimated) charge is the fake's usage at the model's price.
    const misbilled = new Map<string, { n: number; example: string }>();
    const wrongCharge = (e: UsageEntry, what: string) => {
      const s = tally.seen.get(e.requestId);
      const view = !s ? "client saw no answer" : s.abortedByClient ? `client left (${s.abortKind})` : s.complete ? "client got it whole" : `client got ${s.status}`;
      const key = `${e.inboundProtocol}→${e.model}${e.upstreamProtocol ? ` (${e.upstreamProtocol})` : ""}, ${view}: ${what}`;
      const m = misbilled.get(key);
      if (m) m.n++;
      else misbilled.set(key, { n: 1, example: e.requestId });
    };
    let exact = 0;
    for (const e of entries) {
      if (e.costNano === 0n && e.status !== 200) continue;
      const model = modelByName.get(e.model);
      const token = TOKENS.find((t) => t.name === e.token);
      if (!model || !token) { wrongCharge(e, `unknown model or token ${e.token}`); continue; }
      if (e.channel !== undefined && e.channel !== `ch-${model.channel}`) wrongCharge(e, `served by ${e.channel}`);
      if (e.estimated) continue;
      exact++;
      const usage = model.usages.find((x) => sameUsage(x, e.usage));
      if (!usage) { wrongCharge(e, `billed as exact with usage ${showUsage(e.usage)}, none of the fake's`); continue; }
      const want = expectedCostNano(model, token.group, usage);
      if (e.costNano !== want) wrongCharge(e, `cost ${e.costNano}, expected ${want}`);
    }
    const wrongCount = [...misbilled.values()].reduce((a, m) => a + m.n, 0);
    checks.push(check("every exact charge = the fake's usage × price × multiplier, to the nano", wrongCount === 0,
      `${exact} exact charges checked; ${wrongCount} wrong` +
      [...misbilled].map(([k, m]) => `\n        ${m.n} × ${k} (e.g. ${m.example})`).join("")));

    const estimated = entries.filter((e) => e.estimated);
    const fromAborts = estimated.filter((e) => {
      const s = tally.seen.get(e.requestId);
      return s === undefined || s.abortedByClient;
    });
    const explained = new Set(fromAborts);
    const unexplained = estimated.filter((e) => !explained.has(e));
    checks.push(check("estimated entries only for requests the client left", unexplained.length === 0,
      `${estimated.length} estimated (${fromAborts.length} the client aborted or never saw answered); ` +
      `${unexplained.length} others${unexplained.length ? ` e.g. ${unexplained.slice(0, 3).map((e) => e.requestId).join(", ")}` : ""}`));

    const serverErrors = entries.filter((e) => e.status >= 500);
    const serverErrorCodes = new Map<string, number>();
    for (const e of serverErrors) serverErrorCodes.set(`${e.status} ${e.error ?? ""}`, (serverErrorCodes.get(`${e.status} ${e.error ?? ""}`) ?? 0) + 1);
    checks.push(check("no 5xx in the usage log (every upstream answered 200)", serverErrors.length === 0,
      `${serverErrors.length} entries${serverErrors.length ? `: ${[...serverErrorCodes].map(([k, n]) => `${n} × ${k}`).join(", ")}, ` +
        `${serverErrors.filter((e) => !tally.seen.has(e.requestId)).length} of them never answered to the client (e.g. ${serverErrors[0].requestId})` : ""}`));

    const byStatus = new Map<string, number>();
    for (const e of entries) {
      const key = `${e.status}${e.error ? ` ${e.error}` : ""}${e.costNano > 0n ? (e.estimated ? " charged (estimate)" : " charged") : ""}`;
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    }
    return {
      checks,
      facts: { entries: entries.length, sumNano: total, byStatus, estimated: estimated.length, estimatedFromClientAborts: fromAborts.length },
    };
  } finally {
    store.close();
  }
}

/**
 * While the gateway still runs, traffic stopped (SQLite may not hold every entry yet: the
 * readers add the journal's tail): the log's sum, `gateway usage` by each dimension and the
 * spend counters of every user and token agree to the nano-unit, read as the CLI reads them.
 */
export async function checkTotalsAtRest(dbPath: string): Promise<Check[]> {
  const store = (await storeModule()).openSqliteStore(dbPath, { mustExist: true });
  try {
    const entries = store.logs({ limit: Number.MAX_SAFE_INTEGER });
    const logSum = entries.reduce((s, e) => s + (e.refundedAt === undefined ? e.costNano : 0n), 0n);
    const byDimension = (["user", "token", "model", "group"] as const).map((by) => {
      const rows = store.spend(by, {});
      return [by, rows.reduce((s, r) => s + r.costNano, 0n), rows.reduce((n, r) => n + r.requests, 0)] as const;
    });
    const users = (Object.keys(USERS) as UserName[]).reduce((s, u) => s + store.spentByUser(u), 0n);
    const tokens = TOKENS.reduce((s, t) => s + store.spentByToken(t.name), 0n);
    const pass = byDimension.every(([, sum, requests]) => sum === logSum && requests === entries.length) && users === logSum && tokens === logSum;
    return [check("at rest, server up: Σ log = `gateway usage` by user/token/model/group = Σ users' = Σ tokens' spend (nano)", pass,
      `${entries.length} entries, log ${logSum}; usage ${byDimension.map(([by, sum, n]) => `${by} ${sum} (${n} requests)`).join(", ")}; ` +
      `users ${users}, tokens ${tokens}`)];
  } finally {
    store.close();
  }
}

// `gateway channels --config F`: every channel of the config and each of its keys (by
// fingerprint, never the key) with its state (in rotation; out by its cooldown, why and
// until when; or taken out by an operator, who, when and why), and its recent attempts,
// error rate and mean latency.
//
// Where each part comes from: a key's state lives in the keyed store. On a Redis `store`
// the command reads it there (what every gateway on that Redis routes by); on a memory or
// SQLite store it lives in the running gateway's process, so the command reads it from that
// gateway's /metrics (gateway_channel_key_up). The recent figures are per process: they
// always come from /metrics (metrics.listen, else server.listen, of the config, or --url);
// on a cluster that is every worker's, on several gateways only the one asked. What could
// not be read is shown as unknown, with a note, and the exit code is 1.

import { dirname } from "node:path";
import { ChannelHealth } from "../routing/health.js";
import { KeyHealth, keyFingerprint, type KeyOut } from "../routing/key-health.js";
import type { ManualOut } from "../routing/manual-outs.js";
import type { Channel, Runtime } from "../runtime/types.js";
import { parseStoreSpec } from "../state/open.js";
import { addressOf } from "../state/redis.js";
import { channelsKeyCommand } from "./channels-key.js";
import { channelsTestCommand } from "./channels-test.js";
import type { Command } from "./command.js";
import { configOrIssues } from "./config-or-issues.js";
import { formatTable, jsonLine, type CliIo, type Column } from "./format.js";
import { samplesOf, scrape, type Sample } from "./metrics-scrape.js";
import { withRedisKeyed } from "./redis-keyed.js";

/** A key's state as read: in rotation, out by its cooldown (and why), taken out by an
 * operator (who, when, why; its cooldown too when it has one), or unknown. */
type KeyView =
  | { readonly state: "up" }
  | { readonly state: "out"; readonly out: KeyOut }
  | { readonly state: "manual"; readonly manual: ManualOut; readonly out?: KeyOut }
  | { readonly state: "unknown" };

interface Recent {
  readonly attempts: number;
  readonly failures: number;
  readonly seconds: number;
}

/** What the command could read besides the config. */
interface Readings {
  /** By channel name, then key fingerprint. */
  readonly keys?: (channel: Channel, fingerprint: string) => KeyView;
  readonly cooling?: ReadonlySet<string>;
  readonly recent?: ReadonlyMap<string, Recent>;
  readonly notes: string[];
  readonly complete: boolean;
}

const recentKey = (channel: string, key: string) => `${channel}\u0000${key}`;

/** Where the running gateway serves /metrics, as the config says. */
export function metricsUrlOf(runtime: Runtime): string {
  const { host, port } = runtime.metricsListen ?? runtime.server;
  const reachable = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host;
  const shown = reachable.includes(":") ? `[${reachable}]` : reachable;
  return `http://${shown}:${port}${runtime.metricsPath}`;
}

/** Key states and channel cooldowns from the Redis store every gateway on it shares. */
async function readRedis(url: string, runtime: Runtime): Promise<Pick<Readings, "keys" | "cooling">> {
  return withRedisKeyed(url, async (keyed) => {
    const keyHealth = new KeyHealth(keyed);
    const channelHealth = new ChannelHealth(keyed);
    const channels = [...runtime.channels.values()];
    const states = new Map<string, Map<string, KeyView>>();
    const cooling = new Set<string>();
    await Promise.all(channels.map(async (channel) => {
      const found = await keyHealth.states(channel);
      states.set(channel.name, new Map(found.map((s): [string, KeyView] => [s.fingerprint,
        s.manual ? { state: "manual", manual: s.manual, out: s.out } : s.out ? { state: "out", out: s.out } : { state: "up" }])));
      if (await channelHealth.isCooling(channel.name)) cooling.add(channel.name);
    }));
    return { keys: (channel, fp) => states.get(channel.name)?.get(fp) ?? { state: "up" }, cooling };
  });
}

/** Key states (when `withStates`) and recent figures from a running gateway's /metrics. */
function fromMetrics(text: string, withStates: boolean): Pick<Readings, "keys" | "recent"> {
  const names = ["gateway_channel_key_up", "gateway_channel_key_back_timestamp_seconds", "gateway_channel_key_recent_attempts",
    "gateway_channel_key_recent_failures", "gateway_channel_key_recent_seconds", "gateway_channel_key_taken_out_timestamp_seconds"] as const;
  const samples = samplesOf(text, names);
  const byKey = (list: Sample[]) => new Map(list.map((s) => [recentKey(s.labels.channel, s.labels.key), s]));
  const [up, back, attempts, failures, seconds, takenOut] = names.map((n) => byKey(samples.get(n)!));
  const recent = new Map<string, Recent>();
  for (const [k, s] of attempts) {
    recent.set(k, { attempts: s.value, failures: failures.get(k)?.value ?? 0, seconds: seconds.get(k)?.value ?? 0 });
  }
  if (!withStates) return { recent };
  return {
    recent,
    keys: (channel, fp) => {
      const s = up.get(recentKey(channel.name, fp));
      if (!s) return { state: "unknown" }; // a key the running config does not have (yet)
      if (s.value === 1) return { state: "up" };
      const until = back.get(recentKey(channel.name, fp))?.value;
      const manual = takenOut.get(recentKey(channel.name, fp));
      if (s.labels.reason === "manual" || manual) {
        return {
          state: "manual", manual: { actor: manual?.labels.actor ?? "?", reason: manual?.labels.reason ?? "?", at: manual ? manual.value * 1000 : Number.NaN },
        };
      }
      const reason = s.labels.reason === "quota" ? "quota" : "auth";
      return { state: "out", out: { reason, until: until === undefined ? Number.NaN : until * 1000 } };
    },
  };
}

async function read(runtime: Runtime, metricsUrl: string): Promise<Readings> {
  const notes: string[] = [];
  let complete = true;
  const store = parseStoreSpec(runtime.store, dirname(runtime.sourcePath));
  let shared: Pick<Readings, "keys" | "cooling"> | undefined;
  if (store.kind === "redis") {
    try {
      shared = await readRedis(store.url, runtime);
      notes.push(`key states: redis ${addressOf(store.url)} (what every gateway on it routes by)`);
    } catch (error) {
      notes.push(`key states: redis ${addressOf(store.url)} did not answer (${(error as Error).message}); trying the gateway's metrics`);
    }
  }
  let metrics: Pick<Readings, "keys" | "recent"> | undefined;
  try {
    metrics = fromMetrics(await scrape(metricsUrl), !shared);
    if (!shared) notes.push(`key states: the gateway at ${metricsUrl} (store ${store.kind}: they live in its process)`);
    notes.push(`recent (last 5 minutes): the gateway at ${metricsUrl}${store.kind === "redis" ? " only (each gateway counts its own)" : ""}`);
  } catch (error) {
    complete = !!shared;
    notes.push(`no gateway answered at ${metricsUrl} (${(error as Error).message}): recent figures unknown${shared ? "" : ", and key states too (a " + store.kind + " store keeps them in the gateway's process)"}; pass --url if it serves elsewhere`);
  }
  if (!shared && !metrics?.keys) complete = false;
  return { keys: shared?.keys ?? metrics?.keys, cooling: shared?.cooling, recent: metrics?.recent, notes, complete };
}

/** "9m 12s", "1h 3m", "now". */
function untilText(until: number, now: number): string {
  if (!Number.isFinite(until)) return "?";
  const s = Math.max(0, Math.round((until - now) / 1000));
  if (s === 0) return "now";
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

interface Row {
  readonly channel: Channel;
  readonly channelState: string;
  readonly key?: string;
  readonly view?: KeyView;
  readonly recent?: Recent;
}

function rowsOf(runtime: Runtime, readings: Readings): Row[] {
  const rows: Row[] = [];
  for (const channel of runtime.channels.values()) {
    const channelState = !channel.enabled ? "disabled" : readings.cooling?.has(channel.name) ? "cooling" : "enabled";
    if (channel.keys.length === 0) rows.push({ channel, channelState });
    for (const key of channel.keys) {
      const fp = keyFingerprint(key);
      rows.push({
        channel, channelState, key: fp, view: readings.keys?.(channel, fp) ?? { state: "unknown" },
        recent: readings.recent?.get(recentKey(channel.name, fp)) ?? (readings.recent ? { attempts: 0, failures: 0, seconds: 0 } : undefined),
      });
    }
  }
  return rows;
}

const columns: readonly Column[] = [
  { header: "CHANNEL" }, { header: "PROTOCOL" }, { header: "CHANNEL STATE" }, { header: "KEY" }, { header: "KEY STATE" },
  { header: "REASON" }, { header: "BACK IN" }, { header: "ATTEMPTS 5m", right: true }, { header: "ERRORS 5m", right: true },
  { header: "LATENCY 5m", right: true },
];

/** The protocol, and the kind where it is not the protocol's first-party API. */
function protocolOf(channel: Channel): string {
  return channel.kind === channel.protocol ? channel.protocol : `${channel.protocol} (${channel.kind})`;
}

function tableRow(row: Row, now: number): string[] {
  if (row.key === undefined) return [row.channel.name, protocolOf(row.channel), row.channelState, "(no keys)", "-", "-", "-", "-", "-", "-"];
  const v = row.view;
  const r = row.recent;
  return [
    row.channel.name, protocolOf(row.channel), row.channelState, row.key ?? "(no keys)", v?.state === "manual" ? "taken out" : v?.state ?? "-",
    v?.state === "out" ? v.out.reason : v?.state === "manual" ? "operator" : "-",
    v?.state === "out" ? untilText(v.out.until, now) : v?.state === "manual" ? "when put back" : "-",
    r ? String(r.attempts) : "?", r ? (r.attempts ? `${Math.round((100 * r.failures) / r.attempts)}%` : "-") : "?",
    r ? (r.attempts ? `${Math.round((1000 * r.seconds) / r.attempts)} ms` : "-") : "?",
  ];
}

/** The keys taken out by an operator: who, when and why (apart from the cooldowns above). */
function manualSection(rows: readonly Row[]): string {
  const manual = rows.flatMap((row) => (row.view?.state === "manual" ? [{ row, manual: row.view.manual }] : []));
  if (manual.length === 0) return "";
  return "\nkeys taken out by an operator (back only when put back: gateway channels key in CHANNEL KEY):\n" + formatTable(
    [{ header: "CHANNEL" }, { header: "KEY" }, { header: "SINCE" }, { header: "BY" }, { header: "REASON" }],
    manual.map(({ row, manual: m }) => [row.channel.name, row.key ?? "-", timeText(m.at), m.actor, m.reason]),
  ) + "\n";
}

function timeText(at: number): string {
  return Number.isFinite(at) ? new Date(at).toISOString() : "?";
}

function jsonRow(row: Row): string {
  const v = row.view;
  const r = row.recent;
  const cooldown = v?.state === "out" || v?.state === "manual" ? v.out : undefined;
  const back = cooldown && Number.isFinite(cooldown.until) ? new Date(cooldown.until).toISOString() : undefined;
  return jsonLine({
    channel: row.channel.name, protocol: row.channel.protocol, channelState: row.channelState, key: row.key,
    state: v?.state, reason: cooldown?.reason, back,
    takenOut: v?.state === "manual" ? { reason: v.manual.reason, actor: v.manual.actor, at: timeText(v.manual.at) } : undefined,
    attempts: r?.attempts, failures: r?.failures,
    errorRate: r && r.attempts ? r.failures / r.attempts : undefined,
    latencyMs: r && r.attempts ? Math.round((1000 * r.seconds) / r.attempts) : undefined,
  });
}

export const channelsCommand: Command = {
  name: "channels",
  summary: "Lists every channel and key (by fingerprint) with its state, why a key is out and until when, and recent error rate and latency.",
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config whose channels to list (default gateway.yaml)" },
    url: { type: "string", value: "URL", description: "a running gateway's /metrics URL (default: metrics.listen, else server.listen, of the config)" },
    json: { type: "boolean", description: "one JSON object per key instead of a table" },
  },
  notes: "KEY is a fingerprint: the first and last 4 hex digits of sha256(key). A key is out after the provider refused it (auth)\n" +
    "or said its account is out of credit or quota (quota), until channels[].key_cooldown passes or a reload changes the channel's keys\n" +
    "(or channels[].probe finds it answering again). A key 'taken out' was taken out by an operator (`gateway channels key out`):\n" +
    "it stays out until put back (`gateway channels key in`); who, when and why are listed below the table.\n" +
    "Exit 1 when the config cannot be read or the key states could not be read.\n" +
    "`gateway channels test [NAME...]` sends each key one small real request instead: see `gateway channels test --help`.",
  subcommands: [channelsTestCommand, channelsKeyCommand],
  async run(flags, io: CliIo) {
    const file = flags.values.get("config") ?? "gateway.yaml";
    const runtime = await configOrIssues(file, io);
    if (!runtime) return 1;
    const readings = await read(runtime, flags.values.get("url") ?? metricsUrlOf(runtime));
    const rows = rowsOf(runtime, readings);
    const now = io.now?.() ?? Date.now();
    if (flags.switches.has("json")) {
      io.out(rows.map(jsonRow).join(""));
      for (const note of readings.notes) io.err(`note: ${note}\n`);
    } else {
      io.out(formatTable(columns, rows.map((row) => tableRow(row, now))));
      io.out(manualSection(rows));
      io.out(readings.notes.map((note) => `note: ${note}\n`).join(""));
    }
    return readings.complete ? 0 : 1;
  },
};

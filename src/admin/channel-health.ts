// The channel health routes: each channel key's requests, errors, error rate and latency
// over a recent span (from the usage log, cluster-wide) beside its state, and an operator
// testing one key with the probe of `gateway channels test` (straight to the provider: no
// usage entry, nobody charged), audited. Keys are named by fingerprint, never shown.

import { InvalidField } from "../accounts/money-input.js";
import { NotFound } from "../accounts/store.js";
import { keyFingerprint } from "../routing/key-health.js";
import type { Channel } from "../runtime/types.js";
import { LATENCY_SAMPLE, type KeyHealthRow } from "../state/traffic.js";
import { upstreamAgent } from "../upstream/agents.js";
import { probeKey, type ProbeMode, type ProbeResult } from "../upstream/channel-probe.js";
import { keyView } from "./channels.js";
import { timeParam, timeText } from "./request-parts.js";
import type { AdminRoute } from "./route.js";

/** The longest a key test waits (as `gateway channels test` by default). */
const TEST_TIMEOUT_MS = 30_000;

interface KeyStats {
  readonly requests: number;
  readonly errors: number;
  readonly error_rate: number | null;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
  readonly latency_sample: number;
}

/** errors / requests to 4 decimals (not money: a ratio for a chart); null without requests. */
function statsOf(row: KeyHealthRow | undefined): KeyStats {
  const requests = row?.requests ?? 0;
  const errors = row?.errors ?? 0;
  return {
    requests, errors, error_rate: requests === 0 ? null : Math.round((errors / requests) * 10_000) / 10_000,
    p50_ms: row?.p50Ms ?? null, p95_ms: row?.p95Ms ?? null, latency_sample: row?.latencySample ?? 0,
  };
}

function probeView(channel: string, fingerprint: string, model: string, mode: ProbeMode, r: ProbeResult): Record<string, unknown> {
  return {
    channel, fingerprint, model, mode, ok: r.ok,
    ...(r.status === undefined ? {} : { status: r.status }),
    ...(r.firstByteMs === undefined ? {} : { first_byte_ms: r.firstByteMs }),
    total_ms: r.totalMs,
    ...(r.errorClass === undefined ? {} : { error_class: r.errorClass }),
    ...(r.message === undefined ? {} : { message: r.message }),
  };
}

/** The upstream model a test asks for: the one named (a model the channel serves, mapped),
 * else the channel's probe model, else its first model mapped. */
function upstreamModelOf(channel: Channel, model: string | undefined): string {
  if (model !== undefined) {
    if (!channel.models.has(model)) throw new InvalidField("model", `channel '${channel.name}' does not serve '${model}'`);
    return channel.modelMap.get(model) ?? model;
  }
  if (channel.probe) return channel.probe.upstreamModel;
  const first = channel.models.values().next().value;
  if (first === undefined) throw new InvalidField("model", `channel '${channel.name}' serves no model: name one`);
  return channel.modelMap.get(first) ?? first;
}

export const channelHealthRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/channels/stats", operationId: "channelStats", scope: "read",
    summary: `Each channel key's state, requests, errors (status 400 or more, or a gateway error), error rate and latency p50/p95 since \`since\`, from the usage log, cluster-wide. Counts are exact; the latency percentiles (nearest rank) are over the newest ${LATENCY_SAMPLE} requests of the span. Channels in config order, keys in the channel's order; a key no longer configured, or requests served without a key (fingerprint null), follow.`,
    query: {
      since: { schema: { type: "string" }, description: `From when (default 1h). ${timeText}` },
    },
    responses: { 200: "ChannelStats" },
    async handle({ query, deps }) {
      const now = deps.now();
      const since = timeParam("since", query.since ?? "1h", now)!;
      if (since > now) throw new InvalidField("since", "is in the future");
      const [rows, channels] = await Promise.all([deps.usageLog.keyHealth({ sinceMs: since, untilMs: now + 1 }), deps.keyControl.states()]);
      const left = new Map(rows.map((r) => [`${r.channel}\u0000${r.key ?? ""}`, r]));
      const take = (channel: string, key: string | undefined) => {
        const id = `${channel}\u0000${key ?? ""}`;
        const row = left.get(id);
        left.delete(id);
        return row;
      };
      const data = channels.map((c) => ({
        channel: c.channel, enabled: c.enabled,
        keys: c.keys.map((k) => ({ ...keyView(k), ...statsOf(take(c.channel, k.fingerprint)) })) as Record<string, unknown>[],
      }));
      for (const r of [...left.values()]) {
        let c = data.find((d) => d.channel === r.channel);
        if (!c) data.push((c = { channel: r.channel, enabled: false, keys: [] }));
        c.keys.push({ fingerprint: r.key ?? null, state: "unknown", ...statsOf(r) });
      }
      return { status: 200, body: { since: new Date(since).toISOString(), latency_sample_limit: LATENCY_SAMPLE, data } };
    },
  },
  {
    method: "POST", path: "/admin/v1/channels/{channel}/keys/{fingerprint}/test", operationId: "testKey", scope: "write",
    summary: "Sends one test request on that key straight to the provider (the probe of `gateway channels test`: no usage entry, nobody charged) and answers how it went: status, time to the first byte and in all, and why it failed (auth, quota, denied, rate_limit, request, upstream, bad_answer, timeout, connect, network). Audited.",
    query: {
      model: { schema: { type: "string", minLength: 1 }, description: "A model the channel serves (default: its probe model, else its first)." },
      mode: { schema: { type: "string", enum: ["plain", "stream"] }, description: "Ask for a whole answer or a stream (default plain)." },
    },
    responses: { 200: "KeyTest" },
    async handle({ params, query, actor, deps, runtime }) {
      const channel = runtime.channels.get(params.channel);
      if (!channel) throw new NotFound("channel", params.channel);
      const key = channel.keys.find((k) => keyFingerprint(k) === params.fingerprint);
      if (key === undefined) throw new NotFound("key", `${params.channel}/${params.fingerprint}`);
      const model = query.model === undefined ? undefined : String(query.model);
      const upstreamModel = upstreamModelOf(channel, model);
      const mode = (query.mode as ProbeMode | undefined) ?? "plain";
      const timeoutMs = Math.min(runtime.server.upstreamTimeoutMs || TEST_TIMEOUT_MS, TEST_TIMEOUT_MS);
      const result = await probeKey({ channel, key, upstreamModel, mode }, upstreamAgent(), timeoutMs);
      const view = probeView(channel.name, params.fingerprint, upstreamModel, mode, result);
      await deps.store.recordAudit(actor, "key.test", `${channel.name}/${params.fingerprint}`, undefined, view);
      return { status: 200, body: view };
    },
  },
];

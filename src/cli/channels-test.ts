// `gateway channels test [NAME...] [--model M]`: sends each key of the named channels (every
// enabled one when none is named) one small real request, plain and streamed, straight to
// the upstream in the channel's protocol, and shows per key and mode whether it passed, the
// status, the latency to the first byte and in all, and for a failure the class and the
// provider's message. Keys are shown by fingerprint only. It needs no running gateway and
// charges nobody (the operator's account pays a few tokens per key).

import { Agent } from "undici";
import { parseDuration } from "../config/index.js";
import { keyFingerprint } from "../routing/key-health.js";
import type { Channel, Runtime } from "../runtime/types.js";
import { UsageError } from "./args.js";
import { probeKey, type ProbeMode, type ProbeResult } from "../upstream/channel-probe.js";
import type { Command } from "./command.js";
import { configOrIssues } from "./config-or-issues.js";
import { formatTable, jsonLine, type CliIo, type Column } from "./format.js";

/** The default bound on one test request when server.upstream_timeout is longer: a test
 * that hangs for the gateway's five minutes would tell nothing more. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** Test requests in flight at once. */
const CONCURRENCY = 4;
const MODES: readonly ProbeMode[] = ["plain", "stream"];

/** One line of the report: a key and mode tested, or a channel that could not be. */
interface Row {
  readonly channel: Channel;
  readonly model?: string;
  readonly key?: string;
  readonly mode?: ProbeMode;
  readonly result: ProbeResult;
}

/** What to test on one channel: its upstream model, or why there is nothing to test. */
function upstreamModelOf(channel: Channel, model: string | undefined): string | undefined {
  const name = model ?? channel.models.values().next().value;
  return name === undefined ? undefined : channel.modelMap.get(name) ?? name;
}

/** The channels named (every one must exist), else every enabled channel, in config order. */
function chosenChannels(runtime: Runtime, names: readonly string[], file: string): Channel[] {
  if (names.length === 0) return [...runtime.channels.values()].filter((c) => c.enabled);
  const unknown = names.filter((n) => !runtime.channels.has(n));
  if (unknown.length > 0) {
    throw new UsageError(`no channel named ${unknown.map((n) => `'${n}'`).join(", ")} in ${file} (it has: ${[...runtime.channels.keys()].join(", ") || "none"})`);
  }
  return [...new Set(names)].map((n) => runtime.channels.get(n)!);
}

const untested = (channel: Channel, message: string, model?: string): Row =>
  ({ channel, model, result: { ok: false, totalMs: 0, message } });

async function testChannels(channels: readonly Channel[], model: string | undefined, timeoutMs: number): Promise<Row[]> {
  // Its own pool, closed at the end: the command's sockets never outlive it.
  const dispatcher = new Agent({ keepAliveTimeout: 1_000, connections: CONCURRENCY });
  const jobs: (() => Promise<Row>)[] = [];
  const rows: (Row | undefined)[] = [];
  for (const channel of channels) {
    const upstreamModel = upstreamModelOf(channel, model);
    if (upstreamModel === undefined) rows.push(untested(channel, "the channel serves no model: pass --model"));
    else if (channel.keys.length === 0) rows.push(untested(channel, "the channel has no keys", upstreamModel));
    else {
      for (const key of channel.keys) {
        for (const mode of MODES) {
          const at = rows.push(undefined) - 1;
          jobs.push(async () => (rows[at] = {
            channel, model: upstreamModel, key: keyFingerprint(key), mode,
            result: await probeKey({ channel, key, upstreamModel, mode }, dispatcher, timeoutMs),
          }));
        }
      }
    }
  }
  try {
    let next = 0;
    const worker = async () => { while (next < jobs.length) await jobs[next++](); };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, worker));
  } finally {
    await dispatcher.close();
  }
  return rows as Row[];
}

const ms = (value: number | undefined) => (value === undefined ? "-" : `${value} ms`);

const columns: readonly Column[] = [
  { header: "CHANNEL" }, { header: "MODEL" }, { header: "KEY" }, { header: "MODE" }, { header: "RESULT" }, { header: "STATUS", right: true },
  { header: "FIRST BYTE", right: true }, { header: "TOTAL", right: true }, { header: "ERROR" }, { header: "MESSAGE" },
];

function tableRow({ channel, model, key, mode, result }: Row): string[] {
  return [
    channel.name, model ?? "-", key ?? "-", mode ?? "-", result.ok ? "pass" : "FAIL", result.status === undefined ? "-" : String(result.status),
    ms(result.firstByteMs), ms(result.totalMs), result.errorClass ?? "-", result.message ?? "",
  ];
}

function jsonRow({ channel, model, key, mode, result }: Row): string {
  return jsonLine({
    channel: channel.name, protocol: channel.protocol, model, key, mode, ok: result.ok, status: result.status,
    firstByteMs: result.firstByteMs, totalMs: result.totalMs, error: result.errorClass, message: result.message,
  });
}

function timeoutOf(flag: string | undefined, runtime: Runtime): number {
  if (flag === undefined) return Math.min(runtime.server.upstreamTimeoutMs, DEFAULT_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS;
  let value: number;
  try {
    value = parseDuration(flag);
  } catch {
    throw new UsageError(`--timeout '${flag}': write a duration such as 10s or 1500ms`);
  }
  if (value <= 0) throw new UsageError(`--timeout '${flag}': must be more than 0`);
  return value;
}

export const channelsTestCommand: Command = {
  name: "channels test",
  summary: "Sends each key of the channels one small real request, plain and streamed, straight to the upstream, and shows what it answered.",
  synopsis: "gateway channels test [NAME...] [--model M] [--timeout DURATION] [--json] [--config FILE]",
  operands: Number.POSITIVE_INFINITY,
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config whose channels to test (default gateway.yaml)" },
    model: { type: "string", value: "M", description: "the model to ask for, mapped through each channel's model_map (default: the channel's first model)" },
    timeout: { type: "string", value: "DURATION", description: "the longest one test request may take (default: server.upstream_timeout, at most 30s)" },
    json: { type: "boolean", description: "one JSON object per key and mode instead of a table" },
  },
  notes: "NAME: a channel of the config (a disabled one too); none named: every enabled channel. Each key gets a one-word prompt\n" +
    "with an output limit of 8 tokens in the channel's protocol: the operator's account pays those few tokens, no tenant is charged,\n" +
    "and no gateway needs to run. KEY is the key's fingerprint, as `gateway channels` shows it; a key never appears in the output.\n" +
    "ERROR: auth or quota (a key fault, as key health tells it), denied, rate_limit, request, upstream (5xx), bad_answer,\n" +
    "timeout, connect or network. Exit 0 when every test passed, 1 when one failed or the config cannot be read, 2 for an unknown NAME.",
  async run(flags, io: CliIo) {
    const file = flags.values.get("config") ?? "gateway.yaml";
    const runtime = await configOrIssues(file, io);
    if (!runtime) return 1;
    const channels = chosenChannels(runtime, flags.operands, file);
    const timeoutMs = timeoutOf(flags.values.get("timeout"), runtime);
    if (channels.length === 0) {
      io.err(`${file}: no enabled channel to test\n`);
      return 1;
    }
    const rows = await testChannels(channels, flags.values.get("model"), timeoutMs);
    if (flags.switches.has("json")) io.out(rows.map(jsonRow).join(""));
    else {
      io.out(formatTable(columns, rows.map(tableRow)));
      const failed = rows.filter((r) => !r.result.ok).length;
      io.out(failed === 0 ? `all ${rows.length} tests passed\n` : `${failed} of ${rows.length} tests failed\n`);
    }
    return rows.every((r) => r.result.ok) ? 0 : 1;
  },
};

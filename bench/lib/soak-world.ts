// The soak's world as data: users, tokens, groups, priced models and one channel per
// protocol, rendered to gateway.yaml; and the exact cost each fake's answer must be billed
// at, computed here independently of the gateway's own arithmetic.

import { stringify } from "yaml";
import type { Usage } from "../../src/protocols/usage.js";

/** Channel protocols, as gateway.yaml names them. */
export type Protocol = "openai" | "anthropic" | "gemini";

/** A priced model served by exactly one channel, so its route is known in advance. */
export interface SoakModel {
  readonly name: string;
  readonly channel: Protocol;
  readonly endpoint: "chat" | "responses";
  /** Decimal text, fiat per 1M tokens / plain ratios (kept as text: no float on money). */
  readonly price: { readonly input: string; readonly output: string; readonly cacheRead?: string; readonly cacheWrite?: string };
  /** Normalised usage of every complete answer the fake upstream gives for this model. */
  readonly usages: readonly Usage[];
}

const u = (input: number, cacheRead: number, cacheWrite: number, output: number, reasoning: number): Usage =>
  ({ input, cacheRead, cacheWrite, output, reasoning });

/** The models; usages follow the fakes' constants in test/helpers (fake-*.ts). */
export const MODELS = {
  gpt: {
    name: "soak-gpt", channel: "openai", endpoint: "chat",
    price: { input: "0.15", output: "0.6", cacheRead: "0.5" },
    // fakeUsage: prompt 12 (2 cached), completion 5 (1 reasoning)
    usages: [u(10, 2, 0, 5, 1)],
  },
  claude: {
    name: "soak-claude", channel: "anthropic", endpoint: "chat",
    price: { input: "3", output: "15", cacheRead: "0.1", cacheWrite: "1.25" },
    // anthropicFakeUsage, and anthropicFakeCacheUsage (the `cache` script)
    usages: [u(12, 0, 0, 5, 0), u(12, 30, 7, 5, 0)],
  },
  gemini: {
    name: "soak-gemini", channel: "gemini", endpoint: "chat",
    price: { input: "0.3", output: "2.5", cacheRead: "0.25" },
    // geminiFakeUsage, and geminiFakeCacheUsage (prompt 12 of which 8 cached)
    usages: [u(12, 0, 0, 5, 0), u(4, 8, 0, 5, 0)],
  },
  resp: {
    name: "soak-resp", channel: "openai", endpoint: "responses",
    price: { input: "1.1", output: "4.4", cacheRead: "0.25" },
    // responsesFakeUsage: input 20 (4 cached), output 8 (3 reasoning)
    usages: [u(16, 4, 0, 8, 3)],
  },
} as const satisfies Record<string, SoakModel>;

export type ModelKey = keyof typeof MODELS;
export const modelByName = new Map<string, SoakModel>(Object.values(MODELS).map((m) => [m.name, m]));

/** Groups and their price multipliers (decimal text). */
export const GROUPS = { std: "0.7", plus: "1.3" } as const;
export type GroupName = keyof typeof GROUPS;

/** Users and their credit in fiat (plenty for minutes of traffic: a request costs ~1e-5). */
export const USERS = { alice: { credit: "500", group: "std" }, bob: { credit: "500", group: "plus" } } as const satisfies
  Record<string, { credit: string; group: GroupName }>;
export type UserName = keyof typeof USERS;

export interface SoakToken { readonly name: string; readonly key: string; readonly user: UserName; readonly group: GroupName }

export const TOKENS: readonly SoakToken[] = [
  { name: "alice-1", key: "sk-soak-alice-1-0123456789", user: "alice", group: "std" },
  { name: "alice-2", key: "sk-soak-alice-2-0123456789", user: "alice", group: "std" },
  { name: "bob-1", key: "sk-soak-bob-1-0123456789", user: "bob", group: "plus" },
];

/** Base URLs of the fake upstreams, one per channel protocol. */
export type UpstreamUrls = Readonly<Record<Protocol, string>>;

export interface ConfigInputs {
  readonly port: number;
  readonly dbPath: string;
  readonly upstreams: UpstreamUrls;
  /** Bumped by every reload: written as a comment and as the channels' weight (neither
   * changes a price nor, with one channel per model, a route). */
  readonly revision: number;
}

/** gateway.yaml for the soak. */
export function renderConfig(w: ConfigInputs): string {
  const weight = 1 + (w.revision % 5);
  const channelOf = (protocol: Protocol) => ({
    name: `ch-${protocol}`, protocol, base_url: w.upstreams[protocol], keys: [`sk-upstream-${protocol}-soak`],
    groups: Object.keys(GROUPS), models: Object.values(MODELS).filter((m) => m.channel === protocol).map((m) => m.name),
    weight,
  });
  const price = (m: SoakModel) => ({
    input: Number(m.price.input), output: Number(m.price.output),
    ...(m.price.cacheRead ? { cache_read_ratio: Number(m.price.cacheRead) } : {}),
    ...(m.price.cacheWrite ? { cache_write_ratio: Number(m.price.cacheWrite) } : {}),
  });
  const body = stringify({
    server: { listen: `127.0.0.1:${w.port}`, upstream_timeout: "20s", drain_timeout: "5s" },
    store: `sqlite:${w.dbPath}`,
    groups: Object.fromEntries(Object.entries(GROUPS).map(([g, mult]) => [g, { multiplier: Number(mult) }])),
    users: Object.fromEntries(Object.entries(USERS).map(([name, x]) => [name, { credit: Number(x.credit), groups: [x.group] }])),
    tokens: TOKENS.map((t) => ({ name: t.name, key: t.key, user: t.user, group: t.group })),
    channels: (["openai", "anthropic", "gemini"] as const).map(channelOf),
    models: Object.fromEntries(Object.values(MODELS).map((m) => [m.name, { endpoint: m.endpoint, price: price(m) }])),
  });
  return `# soak config, revision ${w.revision} (rewritten by bench/soak.ts to exercise reloads)\n${body}`;
}

/** A decimal text as an integer in millionths: "0.15" → 150000n. */
export function micro(decimal: string): bigint {
  const [int, frac = ""] = decimal.split(".");
  if (frac.length > 6) throw new Error(`${decimal}: more than 6 decimals`);
  return BigInt(int + frac.padEnd(6, "0"));
}

export const creditNano = (user: UserName): bigint => micro(USERS[user].credit) * 1000n;

/**
 * What a usage must cost in nano-units (SPEC: input, cache read/write at input × ratio,
 * output at the output price, × the group multiplier, one half-up rounding):
 * nano = Σ tokens × price·10⁶ × ratio·10⁶ × multiplier·10⁶ / 10¹⁵.
 */
export function expectedCostNano(model: SoakModel, group: GroupName, usage: Usage): bigint {
  const input = micro(model.price.input);
  const output = micro(model.price.output);
  const one = 1_000_000n;
  const sum =
    BigInt(usage.input) * input * one +
    BigInt(usage.cacheRead) * input * micro(model.price.cacheRead ?? "1") +
    BigInt(usage.cacheWrite) * input * micro(model.price.cacheWrite ?? "1") +
    BigInt(usage.output) * output * one;
  const scaled = sum * micro(GROUPS[group]);
  const divisor = 10n ** 15n;
  return (scaled + divisor / 2n) / divisor;
}

/** Nano per output token of a model in a group, when that is an integer (for the balance probe). */
export function nanoPerOutputToken(model: SoakModel, group: GroupName): bigint {
  const scaled = micro(model.price.output) * micro(GROUPS[group]) * 1000n;
  const divisor = 10n ** 12n;
  if (scaled % divisor !== 0n) throw new Error(`${model.name} in ${group}: output price per token is not a whole nano`);
  return scaled / divisor;
}

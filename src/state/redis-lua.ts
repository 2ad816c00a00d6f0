// Lua fragments the Redis scripts share. Redis's Lua has only doubles (exact below 2^53)
// while money in nano-units reaches 2^63, so amounts travel as decimal strings and are
// compared here as two limbs of base 10^9: value = hi·10^9 + lo, 0 ≤ lo < 10^9. An int64
// has at most 19 digits, so hi stays below 10^10 even for sums of several values: exact.
// Writes never go through Lua numbers: HINCRBY takes the decimal string and Redis adds
// in exact 64-bit integers.

import type { Redis } from "ioredis";

/** `big(s)` parses, `add` sums, `lt` compares; exact for |value| < 2^63 and sums of a few. */
export const EXACT_LUA = `
local B = 1000000000
local function big(s)
  if not s or s == '' then return 0, 0 end
  local neg = string.sub(s, 1, 1) == '-'
  if neg then s = string.sub(s, 2) end
  local n = #s
  local hi, lo = 0, tonumber(s)
  if n > 9 then
    hi = tonumber(string.sub(s, 1, n - 9))
    lo = tonumber(string.sub(s, n - 8))
  end
  if neg then
    hi, lo = -hi, -lo
    if lo < 0 then lo = lo + B; hi = hi - 1 end
  end
  return hi, lo
end
local function add(ah, al, bh, bl)
  local h, l = ah + bh, al + bl
  if l >= B then l = l - B; h = h + 1 end
  return h, l
end
local function lt(ah, al, bh, bl)
  return ah < bh or (ah == bh and al < bl)
end
`;

/** Limbs of int64's largest value: amounts beyond it are clamped before they reach Lua. */
export const INT64_MAX = 2n ** 63n - 1n;

/** An amount as Redis's exact integer arithmetic accepts it. */
export function int64(nano: bigint): string {
  return (nano > INT64_MAX ? INT64_MAX : nano < -INT64_MAX ? -INT64_MAX : nano).toString();
}

/** A script run with EVALSHA (EVAL once when Redis does not know it yet): keys, then args
 * (preceded by the number of keys when the script was defined without one). */
export type Script = (...keysThenArgs: string[]) => Promise<unknown>;

/** Registers `lua` on the client (ioredis caches its SHA) and returns a typed caller. */
export function defineScript(client: Redis, name: string, numberOfKeys: number | undefined, lua: string): Script {
  client.defineCommand(name, { numberOfKeys, lua });
  const command = (client as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[name];
  return (...keysThenArgs) => command.apply(client, keysThenArgs);
}

/** The sorted set of hits and the hit sequence of a limiter key (RedisLimiter's layout). */
export function limiterKeys(keyPrefix: string, key: string): [hits: string, seq: string] {
  return [`${keyPrefix}rl:${key}`, `${keyPrefix}rl-seq:${key}`];
}

/**
 * A script that runs `body` once per item of a batch: `body` reads its item's KEYS and ARGV
 * (shadowed, so it is written as for one call) and its `return` is the item's reply.
 * ARGV: the number of items, then each item's key and argument counts, then the items'
 * arguments in order; KEYS: the items' keys in order. Reply: the items' replies in order.
 */
export function batchedLua(prelude: string, body: string): string {
  return `${prelude}
local function one(KEYS, ARGV)
${body}
end
local n = tonumber(ARGV[1])
local replies = {}
local k, a = 1, 2 + 2 * n
for i = 1, n do
  local nk, na = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[k + j - 1] end
  for j = 1, na do args[j] = ARGV[a + j - 1] end
  replies[i] = one(keys, args)
  k, a = k + nk, a + na
end
return replies
`;
}

/** Calls in one batch at most (bounds one script's run, which blocks Redis meanwhile). */
const MAX_BATCH = 128;

/**
 * Gathers the calls of one event-loop turn into one run of a `batchedLua` script: one
 * command, one write and one reply for every request whose admission (or settlement) the
 * turn started, instead of one each. Each call still resolves to its own reply; a failure
 * of the command (Redis unreachable) rejects every call in it.
 */
export class ScriptBatch {
  readonly #script: Script;
  #pending: { keys: readonly string[]; args: readonly string[]; resolve(reply: unknown): void; reject(err: unknown): void }[] = [];
  #scheduled = false;
  readonly #flush = () => this.#run();

  /** @param script defined from batchedLua, without a key count (it is given per call) */
  constructor(script: Script) {
    this.#script = script;
  }

  call(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ keys, args, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After this turn's I/O callbacks: every request they admitted or settled joins in.
      setImmediate(this.#flush);
    });
  }

  #run(): void {
    this.#scheduled = false;
    while (this.#pending.length > 0) {
      const batch = this.#pending.length <= MAX_BATCH ? this.#pending : this.#pending.slice(0, MAX_BATCH);
      this.#pending = this.#pending.length <= MAX_BATCH ? [] : this.#pending.slice(MAX_BATCH);
      const counts: string[] = [String(batch.length)];
      const keys: string[] = [];
      const args: string[] = [];
      for (const item of batch) {
        counts.push(String(item.keys.length), String(item.args.length));
        for (const key of item.keys) keys.push(key);
        for (const arg of item.args) args.push(arg);
      }
      this.#script(String(keys.length), ...keys, ...counts, ...args).then(
        (replies) => {
          for (let i = 0; i < batch.length; i++) batch[i].resolve((replies as unknown[])[i]);
        },
        (err: unknown) => {
          for (const item of batch) item.reject(err);
        },
      );
    }
  }
}


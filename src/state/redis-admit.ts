// The hot path in one round trip: a request's rate windows and its pre-deduction in one Lua
// script, all or nothing. Windows are taken first (a refused request is a 429 before money
// is looked at, as the stages order it); when one refuses, or the money does not fit, the
// hits already taken in the script are removed again. Keys and members are the ones
// RedisLimiter and RedisAccounts use, so their refund, settle and release apply unchanged.
// Not part of the State interfaces yet: a stage that wants one round trip instead of
// take + take + reserve calls this where the store is Redis.

import type { Redis } from "ioredis";
import type { RateWindow, Token, User } from "../runtime/types.js";
import type { Hit, Reservation } from "./interfaces.js";
import { RESERVE_FN_LUA, UNSEEDED, type RedisAccounts, type ReserveReply } from "./redis-accounts.js";
import { defineScript, type Script } from "./redis-lua.js";
import { TAKE_LUA } from "./redis-limiter.js";

/**
 * KEYS: the five of reserve, then hits and sequence of each window.
 * ARGV: the five of reserve, now, then perMs and max of each window.
 * Reply: {'limited', window index, retry-after}, or {'money', reserve's reply...}, or
 * {'ok', hit of each window...}.
 */
const ADMIT_LUA = `${RESERVE_FN_LUA}${TAKE_LUA}
local now = tonumber(ARGV[6])
local windows = (#KEYS - 5) / 2
local taken = {}
local function untake()
  for i, hit in ipairs(taken) do redis.call('ZREM', KEYS[4 + 2 * i], hit) end
end
for i = 1, windows do
  local a = take(KEYS[4 + 2 * i], KEYS[5 + 2 * i], now, tonumber(ARGV[5 + 2 * i]), tonumber(ARGV[6 + 2 * i]))
  if a[1] == 0 then
    untake()
    return {'limited', i - 1, a[2]}
  end
  taken[i] = a[2]
end
local r = reserve(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if r[1] ~= 0 then
  untake()
  return {'money', unpack(r)}
end
return {'ok', unpack(taken)}
`;

/** One rate window to take for the request. */
export interface WindowTake {
  readonly key: string;
  readonly window: RateWindow;
}

export type AdmitResult =
  | { readonly ok: true; readonly reservation: Reservation; readonly hits: readonly Hit[] }
  | { readonly ok: false; readonly window: number; readonly retryAfterMs: number };

export class RedisAdmission {
  readonly #accounts: RedisAccounts;
  readonly #admit: Script;

  constructor(client: Redis, accounts: RedisAccounts) {
    this.#accounts = accounts;
    this.#admit = defineScript(client, "gatewayAdmit", undefined, ADMIT_LUA); // key count given per call
  }

  /**
   * Takes every window and reserves `amountNano`, or nothing: {ok: false} names the window
   * that refused; money refusals throw what RedisAccounts.reserve throws.
   */
  async admit(requestId: string, token: Token, user: User, amountNano: bigint, windows: readonly WindowTake[], now: number): Promise<AdmitResult> {
    const call = this.#accounts.reserveCall(requestId, token, user, amountNano);
    const keys = [...call.keys];
    const args = [...call.args, String(Math.floor(now))];
    for (const { key, window } of windows) {
      keys.push(...this.#accounts.limiterKeys(key));
      args.push(String(window.perMs), String(window.max));
    }
    let reply = await this.#run(keys, args);
    if (reply[0] === "money" && Number(reply[1]) === UNSEEDED) {
      await this.#accounts.seed(); // Redis lost the counters: rebuild, then once more
      reply = await this.#run(keys, args);
    }
    if (reply[0] === "limited") return { ok: false, window: Number(reply[1]), retryAfterMs: Number(reply[2]) };
    const money: ReserveReply = reply[0] === "money" ? [Number(reply[1]), reply[2] as string, reply[3] as string] : [0];
    const reservation = this.#accounts.reserveAnswered(money, requestId, token, user, amountNano); // throws a refusal
    return { ok: true, reservation, hits: reply.slice(1).map(Number) };
  }

  async #run(keys: readonly string[], args: readonly string[]): Promise<[string, ...(number | string)[]]> {
    return (await this.#admit(String(keys.length), ...keys, ...args)) as [string, ...(number | string)[]];
  }
}

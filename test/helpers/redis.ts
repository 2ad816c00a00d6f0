// Redis for tests: the machine's server on 127.0.0.1:6379, a key prefix per test file (the
// process id and a random suffix) so runs never see each other's keys, and cleanup.

import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { escapeGlob } from "../../src/state/redis-keyed.js";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0";

/** A prefix no other test file or run uses: "test:<pid>-<random>:" plus an optional label. */
export function testKeyPrefix(label = ""): string {
  return `test:${process.pid}-${randomBytes(4).toString("hex")}:${label ? `${label}:` : ""}`;
}

/** A plain client for a test's own checks (one per simulated process, for instance). */
export function testRedisClient(url = REDIS_URL): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false });
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${escapeGlob(prefix)}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** The keys under `prefix`, sorted (for asserting what a test left behind). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found = new Set<string>();
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${escapeGlob(prefix)}*`, "COUNT", 500);
    cursor = next;
    for (const k of keys) found.add(k);
  } while (cursor !== "0");
  return [...found].sort();
}

/** Deletes the keys under `prefix` that `mine` claims: what a suite sharing a database with
 * others (a fixed gateway prefix) wrote, by its run's names and its request ids. */
export async function deleteKeysWhere(client: Redis, prefix: string, mine: (key: string) => boolean): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${escapeGlob(prefix)}*`, "COUNT", 1000);
    cursor = next;
    const ours = keys.filter(mine);
    if (ours.length > 0) await client.del(...ours);
  } while (cursor !== "0");
}


// The keyed store of a Redis `store`, opened by a command for as long as it runs: what every
// gateway on that Redis routes by (key health, keys taken out by hand). Fails fast (3 s) when
// Redis does not answer. Honours the URL's key_prefix as the gateways do.

import { Redis } from "ioredis";
import type { KeyedStore } from "../state/interfaces.js";
import { DEFAULT_KEY_PREFIX, splitKeyPrefix } from "../state/redis.js";
import { RedisKeyedStore } from "../state/redis-keyed.js";

/** Runs `use` on the keyed store at `url` (a store: redis://… URL), then disconnects. */
export async function withRedisKeyed<T>(storeUrl: string, use: (keyed: KeyedStore) => Promise<T>): Promise<T> {
  const { url, keyPrefix } = splitKeyPrefix(storeUrl);
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 3_000, commandTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => undefined); // connect() rejects with it
  try {
    await client.connect();
    return await use(new RedisKeyedStore(client, keyPrefix ?? DEFAULT_KEY_PREFIX));
  } finally {
    client.disconnect();
  }
}

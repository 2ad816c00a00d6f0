// `gateway channels key out CHANNEL KEY --reason TEXT` and `gateway channels key in CHANNEL
// KEY`: an operator takes one channel key out of rotation and puts it back, at run time
// (routing/key-control.ts), naming the key by its fingerprint as `gateway channels` shows
// it. They act where key states live, as `gateway channels` reads them: on a Redis `store`
// in Redis, which every gateway on it routes by within a second. On a memory or SQLite
// store the states live in the running gateway's process, which a command cannot reach:
// it says so and points to the admin API.

import { dirname } from "node:path";
import { KeyControl, KeyControlError } from "../routing/key-control.js";
import { KeyHealth } from "../routing/key-health.js";
import type { Runtime } from "../runtime/types.js";
import type { KeyedStore } from "../state/interfaces.js";
import { parseStoreSpec } from "../state/open.js";
import { addressOf } from "../state/redis.js";
import { cliActor, parentCommand } from "./accounts-cli.js";
import { UsageError, type Flags } from "./args.js";
import type { Command } from "./command.js";
import { configOrIssues } from "./config-or-issues.js";
import { jsonLine, type CliIo } from "./format.js";
import { withRedisKeyed } from "./redis-keyed.js";

const configOption = {
  config: { type: "string", short: "c", value: "FILE", description: "the config whose store and channels to act on (default gateway.yaml)" },
  json: { type: "boolean", description: "print the outcome as one JSON object" },
} as const;

/** Opens the keyed store of the config's `store` and runs `act` on it; exit 1 when there is
 * none this command can reach (said why), or Redis does not answer. */
async function onStore(flags: Flags, io: CliIo, act: (control: KeyControl, keyed: KeyedStore, runtime: Runtime) => Promise<number>): Promise<number> {
  const file = flags.values.get("config") ?? "gateway.yaml";
  const runtime = await configOrIssues(file, io);
  if (!runtime) return 1;
  const store = parseStoreSpec(runtime.store, dirname(runtime.sourcePath));
  if (store.kind !== "redis") {
    io.err(`gateway: ${file} keeps key states in the running gateway's own process (store ${runtime.store}), `
      + "which this command cannot reach.\n"
      + "Take the key out or put it back through that gateway's admin API (see docs/admin-api.md), "
      + "or run the gateways on a Redis store (store: redis://…), whose key states this command changes for all of them.\n");
    return 1;
  }
  try {
    return await withRedisKeyed(store.url, (keyed) => act(new KeyControl({ keyed, runtime: () => runtime }), keyed, runtime));
  } catch (error) {
    if (error instanceof KeyControlError) throw new UsageError(error.message);
    io.err(`gateway: redis ${addressOf(store.url)} did not answer (${(error as Error).message}); nothing changed\n`);
    return 1;
  }
}

const keyOutCommand: Command = {
  name: "channels key out",
  summary: "Takes one channel key out of rotation, with a reason, until it is put back (every gateway on the Redis store).",
  synopsis: "gateway channels key out CHANNEL KEY --reason TEXT [--config FILE] [--json]",
  operands: 2,
  options: {
    ...configOption,
    reason: { type: "string", value: "TEXT", description: "why (kept and shown by `gateway channels`; at most 200 characters)" },
  },
  notes: "KEY is the key's fingerprint as `gateway channels` shows it, never the key. The key stays out, whatever the provider\n" +
    "says of it and through restarts and reloads, until `gateway channels key in`; it is never probed (channels[].probe).\n" +
    "A channel whose keys are all out is passed over like one without keys. Who did it is cli:<your user name>.\n" +
    "Exit 0 when done; 1 when the store is not Redis (the admin API of the gateway is the way) or does not answer;\n" +
    "2 for an unknown channel or key, or a missing reason.",
  async run(flags, io) {
    const [channel, fingerprint] = operandsOf(flags);
    const reason = flags.values.get("reason");
    if (reason === undefined) throw new UsageError("--reason TEXT: say why the key is taken out (it is kept and shown)");
    return onStore(flags, io, async (control) => {
      const out = await control.takeOut(channel, fingerprint, reason, cliActor().actor, io.now?.());
      if (flags.switches.has("json")) io.out(jsonLine({ channel, key: fingerprint, state: "taken out", reason: out.reason, actor: out.actor, at: new Date(out.at).toISOString() }));
      else io.out(`${channel} ${fingerprint}: taken out by ${out.actor} at ${new Date(out.at).toISOString()} (${out.reason}); every gateway on this store skips it within a second\n`);
      return 0;
    });
  },
};

const keyInCommand: Command = {
  name: "channels key in",
  summary: "Puts a channel key taken out by `gateway channels key out` back in rotation (every gateway on the Redis store).",
  synopsis: "gateway channels key in CHANNEL KEY [--config FILE] [--json]",
  operands: 2,
  options: configOption,
  notes: "KEY is the key's fingerprint as `gateway channels` shows it. A key also out by its cooldown (the provider refused it)\n" +
    "stays out until that passes; the command says so. Exit 0 when the key is in (or was not out); 1 when the store is not\n" +
    "Redis or does not answer; 2 for an unknown channel or key.",
  async run(flags, io) {
    const [channel, fingerprint] = operandsOf(flags);
    return onStore(flags, io, async (control, keyed, runtime) => {
      const was = await control.putBack(channel, fingerprint, cliActor().actor);
      // putBack found the channel: it is configured.
      const states = await new KeyHealth(keyed).states(runtime.channels.get(channel)!);
      const cooldown = states.find((s) => s.fingerprint === fingerprint)?.out;
      if (flags.switches.has("json")) {
        io.out(jsonLine({
          channel, key: fingerprint, state: cooldown ? "out" : "up", wasTakenOut: was !== undefined,
          cooldown: cooldown && { reason: cooldown.reason, back: new Date(cooldown.until).toISOString() },
        }));
        return 0;
      }
      io.out(was ? `${channel} ${fingerprint}: put back (it was taken out by ${was.actor} at ${new Date(was.at).toISOString()}: ${was.reason})\n`
        : `${channel} ${fingerprint}: was not taken out; nothing to put back\n`);
      if (cooldown) io.out(`note: it is still out by its cooldown (${cooldown.reason}) until ${new Date(cooldown.until).toISOString()}\n`);
      return 0;
    });
  },
};

function operandsOf(flags: Flags): [string, string] {
  const [channel, fingerprint] = flags.operands;
  if (channel === undefined || fingerprint === undefined) throw new UsageError("name the CHANNEL and the KEY (its fingerprint, as `gateway channels` shows it)");
  return [channel, fingerprint];
}

export const channelsKeyCommand: Command = parentCommand("channels key", "Takes one channel key out of rotation, or puts it back.", [keyOutCommand, keyInCommand]);

// `gateway codes create|show`: batches of single-use redemption codes. The codes are
// printed once, one per line on stdout (what a shell redirect or a pipe takes), or written
// to --out FILE created with mode 0600; the store keeps only their hashes. A token holder
// redeems one with POST /v1/dashboard/redeem.

import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { MAX_CODES_PER_BATCH } from "../accounts/service.js";
import { UsageError } from "./args.js";
import { accountCommand, expiryArg, moneyArg, openCliAccounts, parentCommand, type AccountsOpener } from "./accounts-cli.js";
import { batchDetails, jsonLines } from "./account-format.js";
import type { Command } from "./command.js";
import { parseCount } from "./format.js";

const json = { json: { type: "boolean", description: "JSON (one object a line) instead of text" } } as const;

/** Opens FILE for the codes before any is made (so a path that cannot be written loses
 * none): created new, readable by its owner only. */
function openOut(file: string): number {
  try {
    return openSync(file, "wx", 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === "EEXIST" ? `--out '${file}' exists already: name a new file (codes are never written over)` : `--out '${file}': ${(err as Error).message}`);
  }
}

/** `gateway codes …` (the opener is a parameter for tests). */
export function codesCommand(open: AccountsOpener = openCliAccounts): Command {
  const create = accountCommand({
    name: "codes create",
    summary: "Creates a batch of single-use redemption codes, each worth AMOUNT until it expires, and prints them once.",
    synopsis: "gateway codes create --count N --amount AMOUNT --expires 30d|ISO [--batch NAME] [--out FILE] [--json] [--config FILE]",
    options: {
      count: { type: "string", value: "N", description: `how many codes (1 to ${MAX_CODES_PER_BATCH}); required`, check: (v) => void parseCount("count", v) },
      amount: { type: "string", value: "AMOUNT", description: "what each code credits, in the currency (12.5); required", check: (v) => void moneyArg("--amount", v) },
      expires: { type: "string", value: "WHEN", description: "when the codes stop working: an ISO date or date-time, or a span from now (30d); required", check: (v) => void expiryArg(v, 0) },
      batch: { type: "string", value: "NAME", description: "the batch's name (default: batch-<UTC time>)" },
      out: { type: "string", value: "FILE", description: "write the codes to FILE (a new file, mode 0600) instead of stdout" },
      ...json,
    },
    notes: "The codes are shown once: the store keeps only their sha256. Without --out they go to stdout, one per line, and\n"
      + "what the batch is goes to stderr, so `gateway codes create … > codes.txt` keeps only the codes. With --json, one\n"
      + "object: {\"batch\": …, \"codes\": […]} (or without the codes, with --out).",
    check(flags) {
      for (const required of ["count", "amount", "expires"]) if (!flags.values.has(required)) throw new UsageError(`--${required} is required`);
      const count = Number(flags.values.get("count"));
      if (count > MAX_CODES_PER_BATCH) throw new UsageError(`--count '${count}': at most ${MAX_CODES_PER_BATCH} codes a batch`);
    },
    async act({ service, actor }, flags, _operands, io) {
      const out = flags.values.get("out");
      const fd = out === undefined ? undefined : openOut(out);
      let made;
      try {
        made = await service.createCodes({
          count: Number(flags.values.get("count")), amountNano: moneyArg("--amount", flags.values.get("amount")!),
          expiresAt: expiryArg(flags.values.get("expires")!, io.now?.() ?? Date.now()), batch: flags.values.get("batch"),
        }, actor);
      } catch (err) {
        if (fd !== undefined) {
          closeSync(fd);
          unlinkSync(out!);
        }
        throw err;
      }
      const { batch, codes } = made;
      const lines = codes.map((c) => c + "\n").join("");
      if (fd !== undefined) {
        try {
          writeSync(fd, lines);
        } finally {
          closeSync(fd);
        }
      }
      if (flags.switches.has("json")) {
        io.out(jsonLines([fd === undefined ? { batch, codes } : { batch, out }]));
        return;
      }
      const summary = `batch ${batch.batch}: ${batch.count} codes of ${batch.amount} each, until ${batch.expires}`;
      if (fd !== undefined) {
        io.out(`${summary}\ncodes written to ${out} (mode 0600); they are shown nowhere else\n`);
      } else {
        io.err(`${summary}\ncodes (shown once; the gateway keeps only their hashes):\n`);
        io.out(lines);
      }
    },
  }, open);

  const show = accountCommand({
    name: "codes show",
    summary: "Shows a batch: its count, amount, expiry and how many codes were redeemed (never the codes).",
    synopsis: "gateway codes show BATCH [--json] [--config FILE]",
    operands: ["BATCH"],
    options: json,
    async act({ service }, flags, [name], io) {
      const batch = await service.codeBatch(name);
      io.out(flags.switches.has("json") ? jsonLines([batch]) : batchDetails(batch));
    },
  }, open);

  return parentCommand("codes", "Redemption codes: create a batch (the codes shown once), show one.", [create, show]);
}

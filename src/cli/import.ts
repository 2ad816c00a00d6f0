// `gateway import new-api --from URL`: moves a new-api (or one-api) installation over. It
// prints the plan, then (unless --dry-run) writes users, tokens and opening credits to the
// accounts store the config names and the generated gateway.yaml to --out or stdout.
// When the YAML goes to stdout, the plan and the outcome go to stderr, so
// `gateway import new-api … > gateway.yaml` keeps the file clean.

import { readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "yaml";
import { DEFAULTS } from "../config/index.js";
import { applyImport } from "../import/new-api/apply.js";
import { configText, type StoreLines } from "../import/new-api/config-text.js";
import { existingAccounts } from "../import/new-api/existing.js";
import { outcomeText, planText } from "../import/new-api/plan-text.js";
import { readPlan } from "../import/new-api/read-plan.js";
import { BadSourceUrl, maskedUrl, parseSourceUrl } from "../import/new-api/source.js";
import { accountCommand, openCliAccounts, parentCommand, type AccountsOpener } from "./accounts-cli.js";
import { UsageError } from "./args.js";
import type { Command } from "./command.js";

/** The config's own store and ledger text (a ${VAR} stays a reference, never its value).
 * A relative sqlite: path is relative to the config's folder: written to a file in
 * another folder, it is made absolute so the new config finds the same store. */
async function storeLinesOf(file: string, outFile: string | undefined): Promise<StoreLines> {
  const raw = parse(await readFile(file, "utf8")) as Record<string, unknown> | null;
  const pick = (key: string) => (typeof raw?.[key] === "string" ? (raw[key] as string) : undefined);
  const ledger = pick("ledger");
  let store = pick("store");
  const elsewhere = outFile !== undefined && resolve(dirname(outFile)) !== resolve(dirname(file));
  // No store: line means the default, which the new file must then name to reach the same one.
  if (store === undefined && ledger === undefined && elsewhere) store = DEFAULTS.store;
  const path = store?.startsWith("sqlite:") ? store.slice("sqlite:".length) : undefined;
  if (path && elsewhere && !isAbsolute(path) && !path.includes("${")) store = `sqlite:${resolve(dirname(file), path)}`;
  return { store, ledger };
}

function fromFlag(value: string | undefined) {
  if (value === undefined) throw new UsageError("--from is required: the new-api database (sqlite:/path/one-api.db, mysql://…, postgres://…)");
  try {
    return parseSourceUrl(value);
  } catch (err) {
    throw err instanceof BadSourceUrl ? new UsageError(`--from ${err.message}`) : err;
  }
}

/** `gateway import new-api` (the opener is a parameter for tests). */
export function importNewApiCommand(open: AccountsOpener = openCliAccounts): Command {
  return accountCommand({
    name: "import new-api",
    summary: "Imports a new-api (one-api) database: users, tokens with their keys, credit, groups, channels, prices.",
    synopsis: "gateway import new-api --from URL [--config FILE] [--out FILE] [--dry-run]",
    options: {
      from: { type: "string", value: "URL", description: "new-api's database: sqlite:/path/one-api.db, mysql://user:pass@host:3306/db, postgres://user:pass@host:5432/db" },
      out: { type: "string", value: "FILE", description: "write the generated gateway.yaml here (default: stdout)" },
      "dry-run": { type: "boolean", description: "print the plan and stop: nothing is imported" },
    },
    notes: "Users, tokens (keys kept: stored as sha256) and opening credits go to the accounts store --config names;\n"
      + "groups, channels and model prices go to the generated gateway.yaml. Running it again changes nothing.\n"
      + "See docs/import-new-api.md.",
    check: (flags) => void fromFlag(flags.values.get("from")),
    async act({ store }, flags, _operands, io) {
      const from = flags.values.get("from")!;
      const location = fromFlag(from);
      const outFile = flags.values.get("out");
      const dryRun = flags.switches.has("dry-run");
      const report = (text: string) => (outFile !== undefined || dryRun ? io.out(text) : io.err(text));
      let plan;
      try {
        plan = await readPlan(location);
      } catch (err) {
        io.err(`gateway import new-api: cannot read ${maskedUrl(from)}: ${(err as Error).message}\n`);
        return 1;
      }
      report(planText(plan, await existingAccounts(plan, store)));
      if (dryRun) return 0;
      report(outcomeText(await applyImport(plan, store)));
      const yaml = configText(plan, await storeLinesOf(flags.values.get("config") ?? "gateway.yaml", outFile), maskedUrl(from));
      if (outFile === undefined) io.out(yaml);
      else {
        await writeFile(outFile, yaml, { mode: 0o600 });
        io.out(`wrote ${outFile}\n`);
      }
      return 0;
    },
  }, open);
}

/** `gateway import …`: moving another gateway's setup over. */
export function importCommand(open: AccountsOpener = openCliAccounts): Command {
  return parentCommand("import", "Imports another gateway's setup (new-api, one-api) into the store and a gateway.yaml.", [importNewApiCommand(open)]);
}

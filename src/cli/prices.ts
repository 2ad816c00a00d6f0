// `gateway prices import FILE`: reads a public price list (LiteLLM's
// model_prices_and_context_window.json, models.dev's api.json), shows how gateway.yaml's
// prices differ from it, and with --write edits gateway.yaml in place (comments and layout
// kept), atomically, and only when the result passes `gateway check`.

import { randomBytes } from "node:crypto";
import { readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { parseDocument } from "yaml";
import { maskReferences } from "../config/env.js";
import { compileSource, ConfigError, formatIssue } from "../config/index.js";
import { changeLine, flatten, priceValueOf } from "../prices/diff.js";
import { applyPriceEdits, EditError } from "../prices/edit.js";
import { PriceListError, type PriceFormat } from "../prices/listed.js";
import { planImport, type ConfigModels, type ImportPlan, type ModelPlan } from "../prices/plan.js";
import type { PriceObject } from "../prices/price-keys.js";
import { priceFormats, readPriceList } from "../prices/read.js";
import { startupRefusals } from "../server/startup-policy.js";
import { UsageError, type Flags } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { processIo, type CliIo } from "./format.js";

export const pricesCommand: Command = {
  name: "prices",
  summary: "Compares a price list file (LiteLLM, models.dev) with gateway.yaml's prices; --write applies it.",
  synopsis: "gateway prices import FILE [--config gateway.yaml] [--format litellm|models.dev] [--models a,b] [--provider NAME] [--all] [--write]",
  operands: 2,
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config to compare and edit (default gateway.yaml)" },
    format: { type: "string", value: "FORMAT", choices: priceFormats, description: "the list's format (default: told from the file)" },
    models: { type: "string", value: "a,b", description: "only these models; those gateway.yaml lacks are added" },
    provider: { type: "string", value: "NAME", description: "only the list's entries of this provider (litellm_provider, models.dev provider id)" },
    all: { type: "boolean", description: "also add every model of the list that gateway.yaml lacks" },
    write: { type: "boolean", description: "write the new prices into the config (else only show the difference)" },
  },
  notes: `FILE is a downloaded copy; nothing is fetched. Without --write the command prints, per model,
field: old → new, added and removed fields, and exits 0 (1 when a model cannot be priced exactly).
Amounts are exact to 9 decimal places; a cache price is written as a ratio of input when the
ratio is an exact decimal of 6 places, else as its own price.`,
  run: (flags, io) => importPrices(flags, io),
};

/** Runs `gateway prices`; resolves to the exit code (0 shown or written, 1 refused, 2 usage error). */
export async function runPrices(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(pricesCommand, args, io);
}

/** FILE, and the plan options, from the command line; UsageError otherwise. */
function argumentsOf(flags: Flags): { file: string; models?: string[] } {
  const [action, file] = flags.operands;
  if (action !== "import") throw new UsageError(action === undefined ? "say what to do: prices import FILE" : `unknown action '${action}': expected 'import'`);
  if (file === undefined) throw new UsageError("prices import needs the price list FILE");
  const list = flags.values.get("models");
  if (list !== undefined && flags.switches.has("all")) throw new UsageError("--all and --models exclude each other");
  const models = list?.split(",").map((m) => m.trim()).filter(Boolean);
  if (list !== undefined && !models?.length) throw new UsageError("--models needs model names, separated by commas");
  return { file, ...(models && { models }) };
}

async function importPrices(flags: Flags, io: CliIo): Promise<number> {
  const { file, models } = argumentsOf(flags);
  const configPath = flags.values.get("config") ?? "gateway.yaml";
  let listText: string;
  let configText: string;
  try {
    listText = await readFile(file, "utf8");
  } catch (error) {
    io.err(`${file}: cannot read the price list: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    configText = await readFile(configPath, "utf8");
  } catch (error) {
    io.err(`${configPath}: cannot read the config: ${(error as Error).message}\n`);
    return 1;
  }
  let plan: ImportPlan;
  let format: PriceFormat;
  try {
    const list = readPriceList(listText, file, flags.values.get("format") as PriceFormat | undefined);
    format = list.format;
    const all = flags.switches.has("all");
    plan = planImport(list, configModels(configText, configPath), { ...(models && { models }), all, ...(flags.values.has("provider") && { provider: flags.values.get("provider") }) });
  } catch (error) {
    if (!(error instanceof PriceListError)) throw error;
    io.err(`${error.message}\n`);
    return 1;
  }
  io.out(describePlan(plan, format, file));
  for (const e of plan.errors) io.err(`${file}: ${e}\n`);
  if (!flags.switches.has("write")) {
    if (plan.models.length) io.out(`run with --write to apply to ${configPath}\n`);
    return plan.errors.length ? 1 : 0;
  }
  if (plan.errors.length) {
    io.err(`${configPath}: nothing written (${plan.errors.length} model${plan.errors.length === 1 ? "" : "s"} cannot be imported as asked)\n`);
    return 1;
  }
  if (!plan.models.length) {
    io.out(`${configPath}: nothing to write\n`);
    return 0;
  }
  return writePlan(configPath, configText, plan, io);
}

/** gateway.yaml's models and channels, read without compiling (a diff needs no secrets). */
function configModels(text: string, path: string): ConfigModels {
  const doc = parseDocument(maskReferences(text).text, { uniqueKeys: true });
  if (doc.errors.length) throw new PriceListError(`${path}: not valid YAML: ${doc.errors[0].message.split("\n")[0]}`);
  const data = (doc.toJS() ?? {}) as { models?: unknown; channels?: unknown };
  const models = typeof data.models === "object" && data.models !== null ? (data.models as ConfigModels["models"]) : {};
  const channels = Array.isArray(data.channels) ? (data.channels as ConfigModels["channels"]) : [];
  return { models, channels };
}

/** The difference as text: per model its fields, then the unchanged, missing and notes. */
export function describePlan(plan: ImportPlan, format: PriceFormat, file: string): string {
  const lines: string[] = [];
  for (const m of plan.models) {
    const from = `${format} "${m.listed.entry}"${m.listed.provider ? `, ${m.listed.provider}` : ""}`;
    lines.push(`${m.name}${m.added ? ` (new, endpoint ${String(m.listed.endpoint)})` : ""}: from ${from}`);
    for (const c of m.changes) lines.push(`  ${changeLine(c)}`);
  }
  if (plan.unchanged.length) lines.push(`unchanged: ${plan.unchanged.join(", ")}`);
  if (plan.missing.length) lines.push(`not in ${file}: ${plan.missing.join(", ")}`);
  if (plan.notes.length) lines.push("notes:", ...plan.notes.map((n) => `  ${n}`));
  const changed = plan.models.filter((m) => !m.added).length;
  const added = plan.models.length - changed;
  lines.push(`${changed} model${changed === 1 ? "" : "s"} to change, ${added} to add`);
  return lines.join("\n") + "\n";
}

/** Problems `gateway check` would report for config text: issues, then startup refusals. */
function checkProblems(text: string, path: string): string[] {
  try {
    const { runtime } = compileSource(text, { path, env: process.env });
    return startupRefusals(runtime, dirname(runtime.sourcePath)).map((r) => `${path}: ${r}`);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatIssue);
  }
}

/** Models whose price in `text` is not what the plan says (a guard on the text edit). */
function unplanned(text: string, plan: ImportPlan): string[] {
  const data = parseDocument(maskReferences(text).text).toJS() as { models?: Record<string, { price?: unknown }> };
  return plan.models
    .filter((m) => {
      const written = priceValueOf(data.models?.[m.name]?.price ?? {}) as PriceObject;
      const text = (price: PriceObject) => [...flatten(price)].map(([k, v]) => `${k}=${v}`).sort().join("\n");
      return text(written) !== text(m.price);
    })
    .map((m) => m.name);
}

async function writePlan(path: string, text: string, plan: ImportPlan, io: CliIo): Promise<number> {
  const before = checkProblems(text, path);
  if (before.length) {
    for (const p of before) io.err(`${p}\n`);
    io.err(`${path}: does not pass gateway check before the import; fix it first (nothing written)\n`);
    return 1;
  }
  let next: string;
  try {
    next = applyPriceEdits(text, plan.models.map((m: ModelPlan) => ({ model: m.name, value: m.added ? m.body! : m.price, added: m.added })));
  } catch (error) {
    if (!(error instanceof EditError)) throw error;
    io.err(`${path}: cannot edit: ${error.message} (nothing written)\n`);
    return 1;
  }
  const wrong = unplanned(next, plan);
  if (wrong.length) {
    io.err(`${path}: the edited text does not hold the planned prices of ${wrong.join(", ")} (nothing written)\n`);
    return 1;
  }
  const after = checkProblems(next, path);
  if (after.length) {
    for (const p of after) io.err(`${p}\n`);
    io.err(`${path}: the imported prices do not pass gateway check (nothing written)\n`);
    return 1;
  }
  await writeAtomically(path, next);
  const added = plan.models.filter((m) => m.added).length;
  io.out(`wrote ${path}: ${plan.models.length - added} changed, ${added} added\n`);
  return 0;
}

/** Writes beside the file, then renames over it: a reader sees the old or the new file. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const mode = (await stat(path)).mode & 0o777;
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, { mode, flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

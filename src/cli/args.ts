// Command-line flags of every `gateway` command, parsed by node:util's parseArgs against a
// table of the options a command accepts. Anything outside the table is an error that names
// it: an unknown option, a stray argument, a value missing, a switch given a value, a value
// option given twice, a value that fails its check.

import { parseArgs } from "node:util";

/** A bad command line: the command prints the message with a hint and exits 2. */
export class UsageError extends Error {}

/** One option a command accepts: `--name VALUE` (type "string") or a bare switch. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** One-letter alias, as `-c` for `--config`. */
  readonly short?: string;
  /** How the value is shown in the help, as FILE in `--config FILE`. */
  readonly value?: string;
  /** One line for the help. */
  readonly description: string;
  /** The only values accepted, when they are a short list. */
  readonly choices?: readonly string[];
  /** Validates a value; throws UsageError naming the flag. */
  readonly check?: (value: string) => void;
}

/** Options by long name (without `--`). */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** Parsed flags: `--name value` / `--name=value` pairs and the switches given. */
export interface Flags {
  readonly values: ReadonlyMap<string, string>;
  readonly switches: ReadonlySet<string>;
  /** Arguments that are not options, for a command that takes some (`prices import FILE`). */
  readonly operands: readonly string[];
}

/** Parses `args` of `command` against `options`, taking at most `maxOperands` arguments that
 * are not options; throws UsageError on anything else. */
export function parseFlags(args: readonly string[], command: string, options: OptionTable, maxOperands = 0): Flags {
  // Not strict: the tokens let every error name the argument, in the words used here.
  const { tokens } = parseArgs({ args: [...args], options: parserOptions(options), strict: false, allowPositionals: true, tokens: true });
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const operands: string[] = [];
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      if (operands.length < maxOperands) {
        operands.push(token.value);
        continue;
      }
      throw new UsageError(`unexpected argument '${token.value}' for '${command}'`);
    }
    const spec = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!spec) throw new UsageError(`unknown option '${token.rawName}' for '${command}'`);
    const flag = `--${token.name}`;
    if (spec.type === "boolean") {
      if (token.value !== undefined) throw new UsageError(`option '${flag}' takes no value`);
      switches.add(token.name);
      continue;
    }
    // `--user --json` would take `--json` as the value: refused, as parseArgs' strict mode does.
    const value = token.value;
    if (value === undefined || value === "" || (!token.inlineValue && value.startsWith("-"))) {
      throw new UsageError(`option '${flag}' needs a value${spec.value ? ` (${spec.value})` : ""}`);
    }
    if (values.has(token.name)) throw new UsageError(`option '${flag}' is given twice`);
    if (spec.choices && !spec.choices.includes(value)) {
      throw new UsageError(`${flag} '${value}': expected one of ${spec.choices.join(", ")}`);
    }
    spec.check?.(value);
    values.set(token.name, value);
  }
  return { values, switches, operands };
}

function parserOptions(options: OptionTable): Record<string, { type: "string" | "boolean"; short?: string }> {
  const out: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, spec] of Object.entries(options)) out[name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  return out;
}

/** The options as help lines, one each, descriptions aligned: `  -c, --config FILE  …`. */
export function optionLines(options: OptionTable): string {
  const rows = Object.entries(options).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : "    ";
    return [`  ${short}--${name}${spec.value ? ` ${spec.value}` : ""}`, spec.description];
  });
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, description]) => `${left.padEnd(width)}  ${description}\n`).join("");
}

// The command line itself: flags parsed by node:util's parseArgs against each command's
// table, every error naming what was wrong (exit 2, with a hint to run --help), --help
// listing every option of every command, --version from package.json, and dispatch.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseFlags, UsageError, type OptionTable } from "../../src/cli/args.js";
import { commonOptions } from "../../src/cli/command.js";
import type { CliIo } from "../../src/cli/format.js";
import { commands, main } from "../../src/cli/main.js";

const options: OptionTable = {
  config: { type: "string", short: "c", value: "FILE", description: "the config" },
  user: { type: "string", value: "NAME", description: "a user" },
  by: { type: "string", value: "D", choices: ["user", "model"], description: "a dimension" },
  limit: {
    type: "string", value: "N", description: "a count",
    check: (v) => { if (v !== "5") throw new UsageError(`--limit '${v}': not five`); },
  },
  json: { type: "boolean", description: "json" },
  help: { type: "boolean", short: "h", description: "help" },
};

const parse = (...args: string[]) => parseFlags(args, "demo", options);
const rejects = (args: string[], message: string | RegExp) =>
  assert.throws(() => parse(...args), (e: unknown) => e instanceof UsageError && (typeof message === "string" ? e.message === message : message.test(e.message)), args.join(" "));

/** A config file that does not exist: a command that got past its flags would exit 1 on it. */
const absent = join(tmpdir(), "gateway-cli-args-absent.yaml");
const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  const code = await main(argv, io);
  return { code, out, err };
}

describe("parseFlags", () => {
  test("values as --name value, --name=value and -c value; switches bare", () => {
    const flags = parse("--config", "a.yaml", "--user=bob", "--json", "--by", "model");
    assert.deepEqual([...flags.values], [["config", "a.yaml"], ["user", "bob"], ["by", "model"]]);
    assert.deepEqual([...flags.switches], ["json"]);
    assert.equal(parse("-c", "b.yaml").values.get("config"), "b.yaml");
    assert.equal(parse("-cb.yaml").values.get("config"), "b.yaml");
    assert.deepEqual([...parse("-h").switches], ["help"]);
    assert.equal(parse("--user=-x").values.get("user"), "-x", "a value starting with - is taken after =");
    assert.equal(parse("--config", "x=y").values.get("config"), "x=y");
  });

  test("nothing outside the table passes, and each error names the argument", () => {
    rejects(["--bogus"], "unknown option '--bogus' for 'demo'");
    rejects(["--json", "-x"], "unknown option '-x' for 'demo'");
    rejects(["--bogus=1"], "unknown option '--bogus' for 'demo'");
    rejects(["stray"], "unexpected argument 'stray' for 'demo'");
    rejects(["--json", "--", "--user"], "unexpected argument '--user' for 'demo'");
    rejects(["--user"], /^option '--user' needs a value/);
    rejects(["--user="], /^option '--user' needs a value/);
    rejects(["--user", "--json"], /^option '--user' needs a value/);
    rejects(["--json=yes"], "option '--json' takes no value");
    rejects(["--user", "a", "--user=b"], "option '--user' is given twice");
    rejects(["--by", "colour"], "--by 'colour': expected one of user, model");
    rejects(["--limit", "4"], "--limit '4': not five");
  });
});

describe("gateway (dispatch, help, version)", () => {
  test("--help, -h and help list every command and exit 0 without serving", async () => {
    for (const argv of [["--help"], ["-h"], ["help"], ["--config", absent, "--help"]]) {
      const { code, out, err } = await run(argv);
      assert.equal(code, 0, argv.join(" "));
      assert.equal(err, "");
      assert.match(out, /^usage: gateway \[COMMAND\] \[options\]$/m);
      for (const command of commands) assert.match(out, new RegExp(`^  ${command.name} +\\S`, "m"), command.name);
      assert.match(out, /^ +--version +print the version/m);
    }
  });

  test("--version prints package.json's version, for gateway and each command", async () => {
    assert.deepEqual(await run(["--version"]), { code: 0, out: `${version}\n`, err: "" });
    for (const command of commands) assert.deepEqual(await run([command.name, "--version"]), { code: 0, out: `${version}\n`, err: "" }, command.name);
  });

  test("every command's --help lists each of its options on one line", async () => {
    for (const command of commands) {
      const { code, out } = await run([command.name, "--help"]);
      assert.equal(code, 0, command.name);
      assert.match(out, new RegExp(`^usage: gateway .*${command.name}`, "m"));
      for (const [name, spec] of Object.entries({ ...command.options, ...commonOptions })) {
        const short = spec.short ? `-${spec.short}, ` : " {4}";
        const line = new RegExp(`^  ${short}--${name}${spec.value ? ` \\S+` : ""} +\\S.*$`, "m");
        assert.match(out, line, `${command.name} --${name}`);
      }
      assert.deepEqual(await run(["help", command.name]), { code, out, err: "" }, `help ${command.name}`);
    }
  });

  test("an unknown option exits 2 naming it and the command, with a hint to run --help", async () => {
    for (const command of commands) {
      const { code, out, err } = await run([command.name, "--bogus"]);
      assert.equal(code, 2, command.name);
      assert.equal(out, "");
      assert.equal(err.split("\n")[0], `gateway: unknown option '--bogus' for '${command.name}'`);
      assert.match(err, new RegExp(`^run 'gateway ${command.name} --help' for its options$`, "m"));
    }
    const served = await run(["--config", absent, "--bogus"]);
    assert.equal(served.code, 2, "no command means serve, and serve takes only --config");
    assert.match(served.err, /^gateway: unknown option '--bogus' for 'serve'$/m);
  });

  test("an unknown command exits 2 naming it", async () => {
    for (const argv of [["frob"], ["help", "frob"], ["frob", "--help"]]) {
      const { code, err } = await run(argv);
      assert.equal(code, 2, argv.join(" "));
      assert.equal(err, "gateway: unknown command 'frob'\nrun 'gateway --help' for the commands\n");
    }
  });

  test("values are checked before anything is opened (exit 2, not 1)", async () => {
    const bad: [string[], RegExp][] = [
      [["logs", "--limit", "0"], /--limit '0': expected a positive integer/],
      [["logs", "--limit", "ten"], /--limit 'ten': expected a positive integer/],
      [["logs", "--limit", "99999999999999999999"], /expected a positive integer/],
      [["logs", "--status", "abc"], /--status 'abc'/],
      [["logs", "--since", "soon"], /--since 'soon'/],
      [["usage", "--until", "later"], /--until 'later'/],
      [["usage", "--by", "colour"], /--by 'colour': expected one of user, token, model, group/],
      [["usage", "--json=1"], /option '--json' takes no value/],
      [["usage", "--store", "sqlite:x.db"], /give --config or --store, not both/],
      [["check", "--config"], /option '--config' needs a value/],
      [["check", "extra.yaml"], /unexpected argument 'extra\.yaml' for 'check'/],
      [["serve", "--config", absent, "--config", absent], /option '--config' is given twice/],
      [["migrate", "--from", "sqlite:x.db"], /both --from and --to are needed/],
      [["migrate", "--from", "nonsense", "--to", "postgres://h/db"], /--from: store "nonsense"/],
      [["migrate", "--from", "sqlite:x.db", "--to", "sqlite:y.db"], /--to must be postgres/],
    ];
    for (const [args, message] of bad) {
      // --config of a missing file: getting past the flags would exit 1 instead
      const argv = args[0] === "usage" || args[0] === "logs" ? [...args, "--config", absent] : args;
      const { code, out, err } = await run(argv);
      assert.equal(code, 2, `${argv.join(" ")}: ${err}`);
      assert.equal(out, "");
      assert.match(err, message, argv.join(" "));
      assert.match(err, /^usage: gateway /m);
    }
  });

  test("valid flags reach the command: a missing config is exit 1, not a usage error", async () => {
    const logs = await run(["logs", "-c", absent, "--limit", "3", "--status", "429", "--since", "24h", "--json"]);
    assert.equal(logs.code, 1, logs.err);
    assert.match(logs.err, /pass --store/);
    const check = await run(["check", `--config=${absent}`]);
    assert.equal(check.code, 1);
    assert.match(check.err, /cannot read the file/);
    const serve = await run(["--config", absent]);
    assert.equal(serve.code, 1);
    assert.match(serve.err, /cannot read the file/);
  });
});

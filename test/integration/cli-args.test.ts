// The command line as operators type it, through bin/gateway.js: --help and --version
// answer and exit instead of serving, an unknown option or command exits 2 naming it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { exited, runGateway } from "../helpers/spawn-gateway.js";

const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** Runs `gateway …args` in an empty folder (no gateway.yaml to serve) and waits for its exit. */
async function gateway(...args: string[]) {
  const child = runGateway(args, tmpdir(), "warn");
  const { code } = await exited(child, 15_000);
  return { code, stdout: child.stdout, stderr: child.stderr };
}

describe("gateway command line", { concurrency: true }, () => {
  test("gateway --help lists the commands and exits 0", async () => {
    const { code, stdout, stderr } = await gateway("--help");
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^usage: gateway \[COMMAND\] \[options\]$/m);
    for (const name of ["serve", "check", "usage", "logs", "migrate"]) assert.match(stdout, new RegExp(`^  ${name} +\\S`, "m"));
  });

  test("gateway --version prints package.json's version and exits 0", async () => {
    assert.deepEqual(await gateway("--version"), { code: 0, stdout: `${version}\n`, stderr: "" });
  });

  test("gateway logs --help lists its flags and exits 0", async () => {
    const { code, stdout } = await gateway("logs", "--help");
    assert.equal(code, 0);
    for (const flag of ["--config FILE", "--store SPEC", "--request-id ID", "--token NAME", "--user NAME", "--model NAME", "--status CODE", "--since T", "--until T", "--limit N", "--json", "--help", "--version"]) {
      assert.match(stdout, new RegExp(`^ +(-\\w, )?${flag} +\\S`, "m"), flag);
    }
  });

  test("an unknown option exits 2 naming it, for the implicit serve too", async () => {
    const usage = await gateway("usage", "--bogus");
    assert.equal(usage.code, 2);
    assert.equal(usage.stdout, "");
    assert.match(usage.stderr, /^gateway: unknown option '--bogus' for 'usage'\n(.*\n)*run 'gateway usage --help' for its options\n$/);
    const serve = await gateway("--config", "gateway.yaml", "--bogus");
    assert.equal(serve.code, 2, "no server starts");
    assert.match(serve.stderr, /^gateway: unknown option '--bogus' for 'serve'$/m);
  });

  test("an unknown command exits 2 naming it", async () => {
    assert.deepEqual(await gateway("frob"), { code: 2, stdout: "", stderr: "gateway: unknown command 'frob'\nrun 'gateway --help' for the commands\n" });
  });
});

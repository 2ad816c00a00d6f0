// Stopping the command the README gives, `npx gateway --config gateway.yaml`: npm runs the
// gateway under a `sh -c` of its own. Ctrl-C (SIGINT to the terminal's process group) drains
// it and the command exits 0; a SIGTERM to npm alone (`kill`, a supervisor) ends npm's shell,
// and the gateway, seeing its parent gone, drains and closes its port instead of serving on
// as an orphan.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, killGroup, root, type Child } from "../helpers/spawn-gateway.js";
import { closedPort, rawRequest } from "./support.js";

/** The shipped gateway.yaml, listening on `port` and keeping its store in `dir`. */
async function shippedConfig(dir: string, port: number): Promise<string> {
  const shipped = await readFile(join(root, "gateway.yaml"), "utf8");
  const text = shipped
    .replace(/^  listen: 127\.0\.0\.1:8080/m, `  listen: 127.0.0.1:${port}`)
    .replace(/^store: sqlite:\.\/data\/gateway\.db$/m, `store: sqlite:${join(dir, "gateway.db")}`);
  assert.notEqual(text.indexOf(`127.0.0.1:${port}`), -1, "gateway.yaml's listen line moved: update this test");
  assert.notEqual(text.indexOf(join(dir, "gateway.db")), -1, "gateway.yaml's store line moved: update this test");
  const file = join(dir, "gateway.yaml");
  await writeFile(file, text);
  return file;
}

/** `npx gateway --config FILE` in the repository, as the README runs it, leading a process
 * group of its own (as a terminal's foreground job does). */
function npxGateway(file: string): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_LOG_LEVEL: "info" };
  delete env.NODE_TEST_CONTEXT;
  const proc = spawn("npx", ["gateway", "--config", file], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const child: Child = { proc, stdout: "", stderr: "", exit: undefined as never };
  proc.stdout!.on("data", (c: Buffer) => { child.stdout += c.toString("utf8"); });
  proc.stderr!.on("data", (c: Buffer) => { child.stderr += c.toString("utf8"); });
  child.exit = new Promise((r) => proc.on("exit", (code, signal) => r({ code, signal })));
  return child;
}

const answers = async (base: string) => (await rawRequest(`${base}/healthz`).catch(() => undefined))?.status === 200;
const closed = async (base: string) =>
  rawRequest(`${base}/healthz`).then(() => false, (err: NodeJS.ErrnoException) => err.code === "ECONNREFUSED");

describe("stopping `npx gateway --config gateway.yaml`", () => {
  let dir: string;
  const children: Child[] = [];
  before(async () => { dir = await mkdtemp(join(tmpdir(), "gw-npx-")); });
  after(async () => {
    for (const child of children) killGroup(child); // the groups these tests started, if still there
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts the README's command on a free port and waits for /healthz. */
  async function started(name: string): Promise<{ child: Child; base: string }> {
    const port = await closedPort();
    const sub = await mkdtemp(join(dir, `${name}-`));
    const child = npxGateway(await shippedConfig(sub, port));
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      if (!alive(child)) throw new Error(`npx exited early:\n${child.stderr}`);
      return answers(base);
    }, 30_000, "the gateway to answer /healthz");
    return { child, base };
  }

  test("Ctrl-C (SIGINT to the process group) drains the gateway and ends the command", async () => {
    const { child, base } = await started("sigint");
    killGroup(child, "SIGINT");
    // npm's `sh -c` dies of the SIGINT, so npm ends as a shell's Ctrl-C does (130); the
    // gateway drains on its own and exits 0 (README: run `node bin/gateway.js` for its code).
    const { code, signal } = await exited(child, 15_000);
    assert.ok((code === 0 && signal === null) || signal === "SIGINT", `npx ended with ${code ?? signal}`);
    await eventually(() => closed(base), 10_000, "the gateway's port to close");
    await eventually(() => /"msg":"stopped","forced":0/.test(child.stderr), 5000, "the gateway to log that it stopped");
    assert.match(child.stderr, /"msg":"draining","signal":"SIGINT"/);
  });

  test("SIGTERM to npm alone stops the gateway too: its port closes", async () => {
    const { child, base } = await started("sigterm");
    child.proc.kill("SIGTERM");
    await exited(child, 15_000);
    await eventually(() => closed(base), 10_000, "the gateway's port to close");
    // The log goes on after npm is gone, into the same pipe.
    await eventually(() => /"msg":"stopped"/.test(child.stderr), 5000, "the gateway to log that it stopped");
    assert.match(child.stderr, /"msg":"draining","signal":"SIGTERM"/);
  });
});

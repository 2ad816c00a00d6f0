// The `gateway` command as a child process, for the suites that run it as operators do
// (cli.test.ts, crash.test.ts): `node bin/gateway.js …` with its output collected, waiting
// for it to exit, and serving a config file on a free port until /healthz answers.

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "./gateway.js";
import { closedPort, rawRequest } from "../integration/support.js";

/** The repository root, and the gateway's entry point in it. */
export const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const bin = join(root, "bin", "gateway.js");

export interface Child {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Log level of a spawned gateway (the test runner's context would otherwise silence it). */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Env for a child gateway: `logLevel` logs, and not the test runner's context. */
function childEnv(logLevel: LogLevel): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_LOG_LEVEL: logLevel };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** Runs `node bin/gateway.js …args` in `cwd`, collecting its stdout and stderr; `detached`
 * makes it the leader of a process group of its own (killGroup ends it with its workers). */
export function runGateway(args: string[], cwd: string, logLevel: LogLevel = "info", detached = false): Child {
  const proc = spawn(process.execPath, [bin, ...args], { cwd, env: childEnv(logLevel), stdio: ["ignore", "pipe", "pipe"], detached });
  const child: Child = { proc, stdout: "", stderr: "", exit: undefined as never };
  proc.stdout!.on("data", (c: Buffer) => { child.stdout += c.toString("utf8"); });
  proc.stderr!.on("data", (c: Buffer) => { child.stderr += c.toString("utf8"); });
  child.exit = new Promise((r) => proc.on("exit", (code, signal) => r({ code, signal })));
  return child;
}

/** Waits for a child to exit within `ms`; kills it (by its own pid) if it does not. */
export async function exited(child: Child, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((r) => { timer = setTimeout(() => r("timeout"), ms); });
  const outcome = await Promise.race([child.exit, timeout]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    child.proc.kill("SIGKILL");
    assert.fail(`process did not exit within ${ms} ms; stderr:\n${child.stderr}`);
  }
  return outcome;
}

/** Sends `signal` to the process group of a child started `detached` (a cluster's primary
 * and its workers at once, as a kill of the service does). */
export function killGroup(child: Child, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(-child.proc.pid!, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err; // already gone
  }
}

/** Whether a child is still running (neither exited nor killed by a signal). */
export const alive = (c: Child | undefined): boolean => !!c && c.proc.exitCode === null && c.proc.signalCode === null;

export interface ServeOptions {
  /** The config file to write and serve; its folder is the gateway's working directory. */
  readonly file: string;
  readonly cwd: string;
  /** The config text for the port picked. */
  readonly yaml: (port: number) => string;
  readonly logLevel?: LogLevel;
  /** How long the gateway may take to answer /healthz; default 10 s. */
  readonly readyMs?: number;
  /** Run it in a process group of its own (see killGroup). */
  readonly detached?: boolean;
}

/**
 * Picks a free port, writes `yaml(port)` to `file`, runs `gateway --config file` and waits
 * until it answers /healthz (failing at once if it exits first; killing it if it never answers).
 */
export async function serveGateway(opts: ServeOptions): Promise<{ child: Child; port: number; base: string }> {
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}`;
  await writeFile(opts.file, opts.yaml(port));
  const child = runGateway(["--config", opts.file], opts.cwd, opts.logLevel, opts.detached);
  try {
    await eventually(async () => {
      if (!alive(child)) throw new Error(`gateway exited early:\n${child.stderr}`);
      return (await rawRequest(`${base}/healthz`).catch(() => undefined))?.status === 200;
    }, opts.readyMs ?? 10_000, "the gateway to answer /healthz");
  } catch (err) {
    if (alive(child)) opts.detached ? killGroup(child) : child.proc.kill("SIGKILL");
    throw err;
  }
  return { child, port, base };
}

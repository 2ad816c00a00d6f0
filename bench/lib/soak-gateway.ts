// The `gateway` command as a child process for the soak, as operators run it:
// `node bin/gateway.js --config <file>` in the config's folder, on a free port, ready once
// /healthz answers; its log (stderr) is kept. (Like test/helpers/spawn-gateway.ts, without
// pulling the in-process test gateway into the soak's own process.)

import { spawn, type ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import net from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The gateway build to soak: this checkout, or SOAK_GATEWAY_ROOT (e.g. an exported
 * commit, to tell the soak's findings from work in progress in this tree). */
export const gatewayRoot = resolve(process.env.SOAK_GATEWAY_ROOT ?? fileURLToPath(new URL("../..", import.meta.url)));
const bin = join(gatewayRoot, "bin", "gateway.js");

/** That build's own SQLite store code, so its store is read with the schema it wrote. */
export async function storeModule(): Promise<typeof import("../../src/state/sqlite.js")> {
  return (await import(pathToFileURL(join(gatewayRoot, "src", "state", "sqlite.ts")).href)) as typeof import("../../src/state/sqlite.js");
}

export interface GatewayProcess {
  readonly proc: ChildProcess;
  readonly base: URL;
  /** Everything it wrote to stderr (its JSON log lines). */
  stderr(): string;
  /** Resolves with "code N" or "signal S" when it exits. */
  readonly exit: Promise<string>;
  readonly alive: () => boolean;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Writes `yaml(port)` to `file`, starts the gateway on it and waits for /healthz (at most `readyMs`). */
export async function startGatewayProcess(o: { file: string; cwd: string; yaml: (port: number) => string; readyMs: number }): Promise<GatewayProcess> {
  const port = await freePort();
  await writeFile(o.file, o.yaml(port));
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_LOG_LEVEL: "info" };
  delete env.NODE_TEST_CONTEXT;
  const proc = spawn(process.execPath, [bin, "--config", o.file], { cwd: o.cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  // Never leave it behind: if the soak itself dies, so does its gateway.
  const reap = () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL"); };
  process.once("exit", reap);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => { reap(); process.exit(130); });
  const chunks: Buffer[] = [];
  proc.stderr!.on("data", (c: Buffer) => chunks.push(c));
  const exit = new Promise<string>((r) => proc.once("exit", (code, signal) => r(signal ? `signal ${signal}` : `code ${code}`)));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  const stderr = () => Buffer.concat(chunks).toString("utf8");
  const base = new URL(`http://127.0.0.1:${port}`);
  const deadline = Date.now() + o.readyMs;
  for (;;) {
    if (!alive()) throw new Error(`gateway exited before it was ready:\n${stderr()}`);
    const status = await fetch(new URL("/healthz", base), { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`gateway did not answer /healthz within ${o.readyMs} ms:\n${stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, base, stderr, exit, alive };
}

// The small message protocol between the bench driver and its child processes (fake
// upstream, bare proxy, transport floor, gateway): the child says where it listens, reports
// its CPU time on request, and stops (closing its servers and exiting by itself).

import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export type ToChild =
  | { readonly type: "cpu" }
  | { readonly type: "stop" };

export type FromChild =
  | { readonly type: "ready"; readonly url: string }
  | { readonly type: "cpu"; readonly userUs: number; readonly systemUs: number; readonly rssBytes: number }
  | { readonly type: "stopped" };

/** What a child entry point starts. */
export interface ChildService {
  readonly url: string;
  close(): Promise<void>;
}

/** Child side: starts the service, then answers the driver until told to stop. */
export async function serveChild(start: () => Promise<ChildService>): Promise<void> {
  const send = (m: FromChild) => process.send?.(m);
  const service = await start();
  let stopping = false;
  process.on("message", (m: ToChild) => {
    switch (m.type) {
      case "cpu": {
        const { user, system } = process.cpuUsage();
        send({ type: "cpu", userUs: user, systemUs: system, rssBytes: process.memoryUsage.rss() });
        return;
      }
      case "stop":
        stopping = true;
        void service.close().then(() => {
          send({ type: "stopped" });
          process.disconnect(); // the event loop empties and the child exits
        });
        return;
    }
  });
  // The driver died without saying stop: do not linger.
  process.on("disconnect", () => {
    if (!stopping) void service.close().finally(() => process.exit(0));
  });
  send({ type: "ready", url: service.url });
}

export interface ChildOptions {
  /** File under bench/children, e.g. "fake.ts". */
  readonly entry: string;
  readonly args?: readonly string[];
  /** Extra node flags (e.g. --cpu-prof). */
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** CPU to pin the child to (taskset), or undefined to let the scheduler choose. */
  readonly cpu?: number;
  /** Read the child's stderr through a pipe, one call per line (as a log collector
   * would); default: inherited. */
  readonly onStderrLine?: (line: string) => void;
}

/** Driver side of one child process. */
export class Child {
  readonly #proc: ChildProcess;
  readonly #waiting: ((m: FromChild) => void)[] = [];
  #exited: Promise<number | null>;
  url = "";
  /** The CPU the child is pinned to, if it is. */
  readonly cpuNumber: number | undefined;

  private constructor(proc: ChildProcess, cpu: number | undefined) {
    this.#proc = proc;
    this.cpuNumber = cpu;
    proc.on("message", (m: FromChild) => this.#waiting.shift()?.(m));
    this.#exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
  }

  get pid(): number {
    return this.#proc.pid ?? -1;
  }

  /** Spawns the child (node --import tsx, optionally under taskset) and waits until it listens. */
  static async start(o: ChildOptions): Promise<Child> {
    const file = fileURLToPath(new URL(`../children/${o.entry}`, import.meta.url));
    const nodeArgs = ["--import", "tsx", ...(o.nodeArgs ?? []), file, ...(o.args ?? [])];
    const [cmd, args] = o.cpu === undefined
      ? [process.execPath, nodeArgs]
      : ["taskset", ["-c", String(o.cpu), process.execPath, ...nodeArgs]];
    // stdout to /dev/null: the gateway writes its request log there (a line per request at
    // info, still paid for), which would otherwise flood the report.
    const proc = spawn(cmd, args, { stdio: ["ignore", "ignore", o.onStderrLine ? "pipe" : "inherit", "ipc"], env: { ...process.env, ...o.env } });
    if (o.onStderrLine && proc.stderr) {
      const onLine = o.onStderrLine;
      createInterface({ input: proc.stderr, crlfDelay: Infinity }).on("line", onLine);
    }
    const child = new Child(proc, o.cpu);
    const ready = await Promise.race([
      child.#next(),
      child.#exited.then((code) => { throw new Error(`${o.entry} exited with code ${code} before it was ready`); }),
    ]);
    if (ready.type !== "ready") throw new Error(`${o.entry}: expected ready, got ${ready.type}`);
    child.url = ready.url;
    return child;
  }

  #next(): Promise<FromChild> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async #ask(m: ToChild): Promise<FromChild> {
    const answer = this.#next();
    this.#proc.send(m);
    return answer;
  }

  /** CPU time the child has used so far, in microseconds (all threads). */
  async cpu(): Promise<{ cpuUs: number; rssBytes: number }> {
    const m = await this.#ask({ type: "cpu" });
    if (m.type !== "cpu") throw new Error(`expected cpu, got ${m.type}`);
    return { cpuUs: m.userUs + m.systemUs, rssBytes: m.rssBytes };
  }

  /** Asks the child to close its servers and exit; kills it (by pid) if it does not within 5 s. */
  async stop(): Promise<void> {
    if (this.#proc.exitCode !== null) return;
    this.#proc.send({ type: "stop" } satisfies ToChild);
    const timer = setTimeout(() => this.#proc.kill("SIGKILL"), 5000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/**
 * Serves a proxy child: an HTTP server (keep-alive like the gateway's) answering 502 when
 * `handle` fails before the head is sent, listening on 127.0.0.1; `close` also runs `cleanup`.
 */
export function serveProxy(
  handle: (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => Promise<void> | void,
  cleanup: () => Promise<unknown> | void,
): Promise<void> {
  return serveChild(async () => {
    const { createServer } = await import("node:http");
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      Promise.resolve(handle(req, res)).catch(() => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as import("node:net").AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await cleanup();
      },
    };
  });
}

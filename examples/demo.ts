// `npm run demo`: a full round trip, offline. Starts the bundled fake provider, runs the
// real `gateway` command on examples/demo.yaml, chats through it with the openai SDK,
// then stops both.

import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../test/helpers/fake-openai.js";
import { chat } from "./chat.js";

const root = fileURLToPath(new URL("..", import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    }).on("error", reject);
  });
}

async function waitHealthy(url: string, deadlineMs = 15_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway did not become healthy at ${url}`);
}

const fake = await startFakeOpenAI({ name: "fake-provider", keys: ["sk-fake-upstream-key"] });
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
console.log(`fake provider: ${fake.url}\ngateway:       ${url}  (node bin/gateway.js --config examples/demo.yaml)\n`);
const gateway = spawn(process.execPath, ["bin/gateway.js", "--config", "examples/demo.yaml"], {
  cwd: root,
  env: { ...process.env, DEMO_LISTEN: `127.0.0.1:${port}`, DEMO_UPSTREAM_URL: fake.url, DEMO_TOKEN: "sk-demo-token" },
  stdio: ["ignore", "inherit", "inherit"],
});
let code = 0;
try {
  await waitHealthy(url);
  await chat(url, "sk-demo-token", "gpt-4o-mini");
  const seen = fake.received.at(-1);
  console.log(`\n[upstream saw] model=${String(seen?.body.model)} authorization=${seen?.headers.authorization?.slice(0, 12)}… (the channel key, not the client token)`);
  // The usage log, read from the store while the gateway runs (after its 10 ms group commit).
  await new Promise((r) => setTimeout(r, 100));
  console.log("\n[usage log] node bin/gateway.js logs --config examples/demo.yaml --limit 3");
  const logs = spawn(process.execPath, ["bin/gateway.js", "logs", "--config", "examples/demo.yaml", "--limit", "3"], {
    cwd: root, env: { ...process.env, DEMO_UPSTREAM_URL: fake.url }, stdio: ["ignore", "inherit", "inherit"],
  });
  await new Promise((r) => logs.once("exit", r));
  // How the last chat's cost was reached, reproduced from its usage-log entry alone.
  const env = { ...process.env, DEMO_UPSTREAM_URL: fake.url };
  const last = execFileSync(process.execPath, ["bin/gateway.js", "logs", "--config", "examples/demo.yaml", "--model", "gpt-4o-mini", "--limit", "1", "--json"], { cwd: root, env });
  const id = (JSON.parse(last.toString()) as { requestId: string }).requestId;
  console.log(`\n[cost explained] node bin/gateway.js logs --config examples/demo.yaml --explain ${id}`);
  process.stdout.write(execFileSync(process.execPath, ["bin/gateway.js", "logs", "--config", "examples/demo.yaml", "--explain", id], { cwd: root, env }));
} catch (err) {
  console.error("demo failed:", err);
  code = 1;
} finally {
  gateway.kill("SIGTERM");
  await new Promise((r) => gateway.once("exit", r));
  await fake.close();
}
process.exit(code);

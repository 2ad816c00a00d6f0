// `npm run bench:console [N]`: how long the console's first page takes with N stored accounts
// (default 1,000,000 users, each with a token and an opening credit) on loopback, in Debian's
// headless Chromium: from navigating to /console (signed in) until the page shows its
// figures — an operator's users page until the first `user-row`, a customer's overview until
// `balance`. Each page is loaded LOADS times in a fresh browser context (no cache), after one
// warm-up load; prints every time and the median, against the bound (< 1 s). Settings (env):
// CONSOLE_LOADS (7). Needs /usr/bin/chromium and the console built (npm run build:console).

import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { chromium, type Browser } from "playwright-core";
import { median } from "./lib/stats.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const total = Number(process.argv[2] ?? 1_000_000);
const loads = Number(process.env.CONSOLE_LOADS ?? 7);
const BOUND_MS = 1000;
const ADMIN_KEY = "gw-admin-bench-0123456789abcdef0123456789";
const CUSTOMER_KEY = "sk-console-bench-0123456789abcdef01234567";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** N users (user-0000000 …), each with one token and an opening grant, written in bulk
 * into the store's own tables (the store's API would audit each: hours for a million). */
async function fillStore(path: string): Promise<void> {
  const { openSqliteAccountStore } = await import("../src/accounts/sqlite-store.js");
  await openSqliteAccountStore(path).close(); // makes the schema
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  const now = Date.now();
  const user = db.prepare(`INSERT INTO account_users (name, status, groups, note, settings, created_at, updated_at, version)
    VALUES (?, 'active', '["default"]', NULL, NULL, ?, ?, 1)`);
  const token = db.prepare(`INSERT INTO account_tokens (name, key_hash, user, grp, status, created_at, updated_at, version)
    VALUES (?, ?, ?, 'default', 'active', ?, ?, 1)`);
  const credit = db.prepare(`INSERT INTO credit_entries (user, amount_nano, kind, reason, actor, idempotency_key, at)
    VALUES (?, ?, 'grant', 'bench', 'bench', NULL, ?)`);
  db.transaction(() => {
    for (let i = 0; i < total; i++) {
      const name = `user-${String(i).padStart(7, "0")}`;
      user.run(name, now, now);
      // The customer measured is the last one: its rows are at the far end of every index.
      token.run(`${name}-main`, sha256(i === total - 1 ? CUSTOMER_KEY : `sk-fill-${i}`), name, now, now);
      credit.run(name, BigInt(1_000_000_000 + i), now);
    }
  })();
  db.close();
}

function gatewayYaml(port: number, store: string): string {
  return `server: { listen: "127.0.0.1:${port}" }
store: sqlite:${store}
admin:
  keys:
    - { name: bench-ops, key_sha256: ${sha256(ADMIN_KEY)}, scopes: [read, write, billing] }
groups: { default: {} }
users: {}
tokens: []
channels: []
models: { gpt-4o-mini: { endpoint: chat, price: { input: 1, output: 1 } } }
`;
}

async function pageTimes(browser: Browser, url: string, secret: string, testid: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i <= loads; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Signed in through the API (the cookie lands in the context), so only the page load is timed.
    const signin = await page.request.post(`${url}/console/api/session`, { data: { secret } });
    if (signin.status() !== 200) throw new Error(`sign-in answered ${signin.status()}: ${await signin.text()}`);
    const started = performance.now();
    await page.goto(`${url}/console`);
    await page.getByTestId(testid).first().waitFor({ timeout: 30_000 });
    const ms = performance.now() - started;
    if (i > 0) times.push(ms); // the first load warms the gateway's caches and the JIT
    await context.close();
  }
  return times;
}

const dir = mkdtempSync(join(tmpdir(), "console-scale-"));
const storePath = join(dir, "gateway.db");
// The gateway as it runs in production (compiled), and the console's assets.
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
execFileSync("node", [join(root, "scripts/build-console.mjs")], { cwd: root, stdio: "inherit" });
const filling = performance.now();
await fillStore(storePath);
console.log(`stored ${total.toLocaleString("en")} users, tokens and grants in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
const port = await freePort();
writeFileSync(join(dir, "gateway.yaml"), gatewayYaml(port, storePath));
const gateway = spawn("node", [join(root, "bin/gateway.js"), "--config", join(dir, "gateway.yaml")], { stdio: ["ignore", "ignore", "inherit"] });
const url = `http://127.0.0.1:${port}`;
let browser: Browser | undefined;
try {
  for (let i = 0; ; i++) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 600) throw new Error("the gateway did not answer /healthz in 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const operator = await pageTimes(browser, url, ADMIN_KEY, "user-row");
  const customer = await pageTimes(browser, url, CUSTOMER_KEY, "balance");
  for (const [who, times] of [["operator users page (first user-row)", operator], ["customer overview (balance)", customer]] as const) {
    const m = median(times);
    console.log(`${who}: median ${m.toFixed(0)} ms over ${times.length} loads [${times.map((t) => t.toFixed(0)).join(", ")}] — ${m < BOUND_MS ? "PASS" : "FAIL"} (< ${BOUND_MS} ms)`);
  }
} finally {
  await browser?.close();
  gateway.kill("SIGTERM");
  await new Promise((r) => gateway.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
}

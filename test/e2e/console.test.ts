// The console end to end in headless Chromium (Debian's, driven by playwright-core): a
// customer signs in with their token and sees the balance the CLI and the billing endpoint
// report; an operator finds the user, tops them up, and the customer's reloaded page shows it;
// a token the operator disables through the console is refused on its next API call; changes
// without the CSRF token are refused, the session cookie is out of scripts' reach, and the page
// runs under its CSP without a violation. Screenshots go to test-artifacts/console/.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { ADMIN_KEYS, adminCall, consoleYaml, customerWithToken, ensureConsoleBuilt } from "../helpers/console.js";
import { assertLabelled } from "../helpers/console-page.js";
import { hello, rawRequest } from "../integration/support.js";

const artifacts = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const WAIT = { timeout: 10_000 };

describe("the console in a browser", { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let key: string;
  const contexts: BrowserContext[] = [];
  /** CSP violations and page errors any page reported. */
  const problems: string[] = [];

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    await ensureConsoleBuilt();
    gw = await startTestGateway(consoleYaml());
    key = await customerWithToken(gw.url, "alice", "25.5");
    await customerWithToken(gw.url, "bob", "7");
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await gw?.close();
  });

  async function newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
    const context = await browser.newContext({ viewport, timezoneId: "Asia/Tokyo" });
    contexts.push(context);
    const page = await context.newPage();
    page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
    page.on("pageerror", (e) => problems.push(e.message));
    return page;
  }

  async function signIn(page: Page, secret: string): Promise<void> {
    const answer = await page.goto(`${gw.url}/console`);
    assert.equal(answer?.status(), 200);
    await page.getByLabel("Access token or admin key").fill(secret);
    await page.getByTestId("signin-submit").click();
  }

  /** The figure in a data-testid element, once it is shown. */
  async function figure(page: Page, testid: string): Promise<string> {
    const el = page.getByTestId(testid);
    await el.waitFor(WAIT);
    return (await el.textContent())!.trim();
  }

  /** What `gateway users show` prints for the user (the same AccountService call). */
  const cliBalance = async (user: string) => (await gw.accounts.service.user(user)).balance;

  test("(a) a customer sees the balance the CLI and the billing endpoint report", async () => {
    const page = await newPage();
    await page.goto(`${gw.url}/console`);
    await page.getByTestId("signin-secret").waitFor(WAIT);
    await page.screenshot({ path: `${artifacts}signin.png`, fullPage: true });
    await assertLabelled(page);
    // By keyboard alone: Tab reaches the field, Enter submits.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "signin-secret");
    await page.keyboard.type(key);
    await page.keyboard.press("Enter");
    const balance = await figure(page, "balance");
    assert.equal(balance, "25.5");
    assert.equal(balance, await cliBalance("alice"));
    const billing = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } });
    assert.match(billing.text, new RegExp(`"balance":${balance.replace(".", "\\.")}[,}]`));
    assert.equal(await figure(page, "reserved"), "0");
    assert.equal(await figure(page, "spent"), "0");
    const text = await page.locator("main").innerText();
    assert.match(text, /25\.5\s+USD/, "the currency beside the figure");
    assert.match(await figure(page, "figures-time"), /^As of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+9 \(Asia\/Tokyo\)\.$/, "the viewer's zone, named");
    await page.screenshot({ path: `${artifacts}customer.png`, fullPage: true });
    await assertLabelled(page);
  });

  test("the customer's page fits a phone's width", async () => {
    const page = await newPage({ width: 375, height: 700 });
    await signIn(page, key);
    assert.equal(await figure(page, "balance"), "25.5");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow} px)`);
    await page.screenshot({ path: `${artifacts}customer-375px.png`, fullPage: true });
  });

  test("(b) an operator tops the user up and the customer's reloaded page shows it", async () => {
    const customer = await newPage();
    await signIn(customer, key);
    assert.equal(await figure(customer, "balance"), "25.5");

    const ops = await newPage();
    await signIn(ops, ADMIN_KEYS.ops);
    const aliceRow = ops.locator('[data-testid="user-row"][data-user="alice"]');
    await aliceRow.waitFor(WAIT);
    await ops.locator('[data-testid="user-row"][data-user="bob"]').waitFor(WAIT);
    await ops.getByLabel("Name starts with").fill("ali");
    await ops.locator('[data-testid="user-row"][data-user="bob"]').waitFor({ state: "detached", ...WAIT });
    assert.equal(await ops.getByTestId("user-row").count(), 1);
    assert.match(await aliceRow.innerText(), /25\.5/);
    await aliceRow.getByRole("button", { name: "Choose alice" }).click();
    await ops.getByTestId("topup-amount").fill("4.000000001");
    await ops.getByTestId("topup-submit").click();
    await ops.getByTestId("topup-message").filter({ hasText: "balance now 29.500000001 USD" }).waitFor(WAIT);
    await aliceRow.filter({ hasText: "29.500000001" }).waitFor(WAIT);
    await ops.screenshot({ path: `${artifacts}operator.png`, fullPage: true });
    await assertLabelled(ops);
    assert.match(await ops.getByTestId("users").innerText(), /alice\s+active\s+29\.500000001 USD/);
    // 200 % zoom of a 1280 px window: 640 CSS pixels; the table scrolls in its own box.
    await ops.setViewportSize({ width: 640, height: 400 });
    const overflow = await ops.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling of the page at 640 px (overflow ${overflow} px)`);
    await ops.screenshot({ path: `${artifacts}operator-640px.png`, fullPage: true });

    // A new token for alice, its key shown once, works on the API at once.
    await ops.getByLabel("Token name").fill("alice-laptop");
    await ops.getByTestId("token-create").click();
    const newKey = (await figure(ops, "token-key"));
    const subscription = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${newKey}` } });
    assert.equal(subscription.status, 200, subscription.text);
    assert.match(subscription.text, /"balance":29\.500000001[,}]/);

    await customer.reload();
    await customer.getByTestId("balance").filter({ hasText: /^29\.500000001$/ }).waitFor(WAIT);
    assert.equal(await figure(customer, "balance"), await cliBalance("alice"));
    await customer.screenshot({ path: `${artifacts}customer-after-topup.png`, fullPage: true });
  });

  test("(d) CSRF: a change without the header is 403; the cookie is HttpOnly; the CSP is sent and kept", async () => {
    const ops = await newPage();
    await signIn(ops, ADMIN_KEYS.ops);
    await ops.getByTestId("user-row").first().waitFor(WAIT);
    const status = await ops.evaluate(async () => (await fetch("/console/api/admin/users/alice/credit", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: "1000", reason: "forged", idempotency_key: "forged-1" }),
    })).status);
    assert.equal(status, 403);
    assert.equal(await cliBalance("alice"), "29.500000001", "nothing was credited");
    assert.equal(await ops.evaluate(() => document.cookie), "", "scripts cannot read the session cookie");
    const [cookie] = await ops.context().cookies();
    assert.equal(cookie.name, "gateway_console");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, "Strict");
    const answer = await ops.goto(`${gw.url}/console`);
    assert.match(answer!.headers()["content-security-policy"], /^default-src 'none'; script-src 'self';/);
    // An inline script is what the CSP exists to stop: the page's own code must not need one.
    assert.deepEqual(problems.filter((p) => /Content Security Policy|Refused to/i.test(p)), []);
  });

  test("(c) a token the operator disables through the console is refused on its next API call", async () => {
    const customer = await newPage();
    await signIn(customer, key);
    assert.equal(await figure(customer, "balance"), "29.500000001");
    const ops = await newPage();
    await signIn(ops, ADMIN_KEYS.ops);
    await ops.getByTestId("user-row").first().waitFor(WAIT);
    const answer = await ops.evaluate(async () => {
      const session = await (await fetch("/console/api/session")).json() as { csrf: string };
      const r = await fetch("/console/api/admin/tokens/alice-main", {
        method: "PATCH", headers: { "content-type": "application/json", "x-csrf-token": session.csrf },
        body: JSON.stringify({ status: "disabled" }),
      });
      return { status: r.status, body: await r.json() as { status: string } };
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.status, "disabled");
    const api = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    assert.equal(api.status, 401);
    assert.equal(api.json.error.code, "token_disabled");
    await customer.reload();
    await customer.getByTestId("signin-secret").waitFor(WAIT);
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/tokens/alice-main")).json.status, "disabled");
  });

  test("no page reported an error", () => {
    // The 401s the signed-out page and the disabled token met are answers, not page errors.
    assert.deepEqual(problems.filter((p) => !/status of 40[13]/.test(p)), []);
  });
});

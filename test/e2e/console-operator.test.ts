// The operator's console end to end in headless Chromium (Debian's, driven by playwright-core):
// an operator disables a user and that user's token is refused on its next API call; takes a
// channel key out with a reason and sees it marked; the Reports page shows, by user, the
// revenue GET /admin/v1/usage?by=user reports, to the nano; the Audit page shows the top-up
// with the admin key's name. Every section is screenshotted to test-artifacts/console/ with
// its figures checked in the page's text, fits 375 px without sideways scrolling, and has
// every control labelled.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { ADMIN_KEYS, adminCall, consoleYaml, customerWithToken, ensureConsoleBuilt } from "../helpers/console.js";
import { stringify } from "yaml";
import { channel, hello, rawRequest } from "../integration/support.js";

const artifacts = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const WAIT = { timeout: 10_000 };
/** A key of channel "spare" the provider refuses (401), so the gateway cools it down. */
const REFUSED_KEY = "sk-upstream-REFUSED-0123456789";

describe("the operator's console in a browser", { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let fake: FakeOpenAI;
  let browser: Browser;
  let carolKey: string;
  let daveKey: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  const chat = (key: string) => rawRequest(`${gw.url}/v1/chat/completions`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(hello),
  });

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    await ensureConsoleBuilt();
    fake = await startFakeOpenAI({ keyFaults: new Map([[REFUSED_KEY, "invalid_key"]]) });
    gw = await startTestGateway(stringify({ plans: { pro: { limits: { request_rate: { max: 100, per: "1m" } } } } }) + consoleYaml({}, [
      channel("main", fake.url),
      channel("spare", fake.url, { keys: [REFUSED_KEY], models: ["gpt-4o-2024-08-06"] }),
    ]));
    carolKey = await customerWithToken(gw.url, "carol", "10");
    daveKey = await customerWithToken(gw.url, "dave", "3");
    // Usage for the reports: two requests of carol's, one of dave's.
    for (const key of [carolKey, carolKey, daveKey]) assert.equal((await chat(key)).status, 200);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await gw?.close();
    await fake?.close();
  });

  let signedIn: BrowserContext | undefined;

  /** A page of the operator's console: the first signs in through the form, the later ones
   * are new tabs of the same browser session (the cookie), which keeps the test quick. */
  async function operator(): Promise<Page> {
    const fresh = signedIn === undefined;
    signedIn ??= await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "Asia/Tokyo" });
    if (fresh) contexts.push(signedIn);
    const page = await signedIn.newPage();
    page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${gw.url}/console`);
    if (fresh) {
      await page.getByLabel("Access token or admin key").fill(ADMIN_KEYS.ops);
      await page.getByTestId("signin-submit").click();
    }
    await page.getByTestId("user-row").first().waitFor(WAIT);
    return page;
  }

  async function open(page: Page, section: string): Promise<void> {
    await page.getByTestId(`nav-${section}`).click();
    await page.locator(`[data-testid="nav-${section}"][aria-current="page"]`).waitFor(WAIT);
  }

  async function assertLabelled(page: Page): Promise<void> {
    const unnamed = await page.evaluate(() => [
      ...[...document.querySelectorAll("input, select, textarea")].filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute("aria-label")),
      ...[...document.querySelectorAll("button")].filter((el) => !el.textContent?.trim() && !el.getAttribute("aria-label")),
    ].map((el) => el.outerHTML));
    assert.deepEqual(unnamed, []);
  }

  /** Screenshot, labels, and the page's width at a phone's 375 px. */
  async function check(page: Page, name: string): Promise<void> {
    await assertLabelled(page);
    await page.screenshot({ path: `${artifacts}operator-${name}.png`, fullPage: true });
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 375, height: 700 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name}: no sideways scrolling at 375 px (overflow ${overflow} px)`);
    await page.screenshot({ path: `${artifacts}operator-${name}-375px.png`, fullPage: true });
    await page.setViewportSize(size);
  }

  test("the sections are reached by keyboard alone", async () => {
    const ops = await operator();
    await ops.getByTestId("nav-users").focus();
    for (const section of ["tokens", "codes"]) {
      await ops.keyboard.press("Tab");
      assert.equal(await ops.evaluate(() => document.activeElement?.getAttribute("data-testid")), `nav-${section}`);
    }
    await ops.keyboard.press("Enter");
    await ops.getByRole("heading", { name: "Redemption codes" }).waitFor(WAIT);
  });

  test("an operator disables a user and the user's token is refused on its next API call", async () => {
    assert.equal((await chat(daveKey)).status, 200, "dave's token works before");
    const ops = await operator();
    const dave = ops.locator('[data-testid="user-row"][data-user="dave"]');
    await dave.getByRole("button", { name: "Disable dave" }).click();
    await ops.locator('[data-testid="user-row"][data-user="dave"][data-status="disabled"]').waitFor(WAIT);
    const refused = await chat(daveKey);
    assert.equal(refused.status, 401, refused.text);
    assert.equal(refused.json.error.code, "user_disabled");
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/users/dave")).json.status, "disabled");
    // The user's detail: money as the API has it, the credit history.
    await dave.getByRole("button", { name: "Choose dave" }).click();
    const balance = (await adminCall(gw.url, "GET", "/admin/v1/users/dave")).json.balance as string;
    await ops.getByTestId("detail-balance").filter({ hasText: new RegExp(`^${balance.replace(".", "\\.")}$`) }).waitFor(WAIT);
    await ops.getByTestId("credit-row").filter({ hasText: "3 USD" }).waitFor(WAIT);
    assert.match(await ops.getByTestId("users").innerText(), /dave\s+disabled/);
    await check(ops, "users");
    // And back: enabled, the token works again.
    await dave.getByRole("button", { name: "Enable dave" }).click();
    await ops.locator('[data-testid="user-row"][data-user="dave"][data-status="active"]').waitFor(WAIT);
    assert.equal((await chat(daveKey)).status, 200);
    // A plan assigned and removed on the detail (PATCH user).
    await ops.getByLabel("Plan (one gateway.yaml declares)").fill("pro");
    await ops.getByTestId("plan-assign").click();
    await ops.locator('[data-testid="user-row"][data-user="dave"]').filter({ hasText: "pro" }).waitFor(WAIT);
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/users/dave")).json.plan, "pro");
    await ops.getByRole("button", { name: "Remove plan pro" }).click();
    await ops.getByTestId("plan-remove").waitFor({ state: "detached", ...WAIT });
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/users/dave")).json.plan, undefined);
  });

  test("tokens: listed and paged on the server, disabled through the page, refused at once", async () => {
    const ops = await operator();
    await open(ops, "tokens");
    const row = ops.locator('[data-testid="token-row"][data-token="carol-main"]');
    await row.waitFor(WAIT);
    assert.match(await ops.getByTestId("tokens").innerText(), /carol-main\s+carol\s+default\s+active/);
    await check(ops, "tokens");
    await row.getByRole("button", { name: "Disable carol-main" }).click();
    await ops.locator('[data-testid="token-row"][data-token="carol-main"][data-status="disabled"]').waitFor(WAIT);
    assert.equal((await chat(carolKey)).status, 401);
    await ops.locator('[data-testid="token-row"][data-token="carol-main"]').getByRole("button", { name: "Enable carol-main" }).click();
    await ops.locator('[data-testid="token-row"][data-token="carol-main"][data-status="active"]').waitFor(WAIT);
    assert.equal((await chat(carolKey)).status, 200);
    // Revoking asks first; confirmed, the token is revoked for good.
    const spare = await adminCall(gw.url, "POST", "/admin/v1/tokens", { name: "carol-spare", user: "carol" });
    await ops.getByLabel("Name starts with").fill("carol-s");
    const spareRow = ops.locator('[data-testid="token-row"][data-token="carol-spare"]');
    await spareRow.getByRole("button", { name: "Revoke carol-spare" }).click();
    await spareRow.getByRole("button", { name: "Keep carol-spare" }).click();
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/tokens/carol-spare")).json.status, "active");
    await spareRow.getByRole("button", { name: "Revoke carol-spare" }).click();
    await spareRow.getByRole("button", { name: "Confirm: revoke carol-spare for good" }).click();
    await ops.locator('[data-testid="token-row"][data-token="carol-spare"][data-status="revoked"]').waitFor(WAIT);
    assert.equal((await chat(spare.json.key as string)).status, 401);
  });

  test("codes: a batch made on the page, its codes shown once", async () => {
    const ops = await operator();
    await open(ops, "codes");
    await ops.getByLabel("How many codes").fill("3");
    await ops.getByLabel("Each worth (USD)").fill("2.5");
    await ops.getByLabel("Batch name (optional)").fill("e2e-batch");
    await ops.getByTestId("codes-create").click();
    const codes = (await ops.getByTestId("codes-list").inputValue()).trim().split("\n");
    assert.equal(codes.length, 3);
    assert.match(await ops.getByTestId("codes-made").innerText(), /Batch e2e-batch: 3 codes of 2\.5 USD/);
    assert.equal((await adminCall(gw.url, "GET", "/admin/v1/codes/e2e-batch")).json.count, 3);
    assert.equal(decodeURIComponent((await ops.getByTestId("codes-download").getAttribute("href"))!.split(",")[1]), `${codes.join("\n")}\n`);
    const paths = (await adminCall(gw.url, "GET", "/admin/v1/openapi.json")).json.paths as Record<string, Record<string, unknown>>;
    if (paths["/admin/v1/codes"]?.get) {
      assert.match(await ops.locator('[data-testid="batch-row"][data-batch="e2e-batch"]').innerText(), /e2e-batch\s+3\s+0\s+2\.5 USD/);
    } else {
      assert.equal(await ops.getByTestId("batches").count(), 0, "no list of batches without the endpoint");
    }
    await check(ops, "codes");
  });

  test("an operator takes a channel key out with a reason and sees it marked; puts it back", async () => {
    const ops = await operator();
    await open(ops, "channels");
    const key = ops.locator('[data-testid="channel"][data-channel="main"] [data-testid="channel-key"]');
    await key.waitFor(WAIT);
    assert.equal(await key.getAttribute("data-state"), "in_rotation");
    const fingerprint = (await key.getAttribute("data-fingerprint"))!;
    await key.getByLabel(`Reason to take ${fingerprint} out`).fill("billing dispute");
    await key.getByRole("button", { name: `Take key ${fingerprint} of main out` }).click();
    await ops.locator('[data-testid="channel-key"][data-state="taken_out"]').waitFor(WAIT);
    assert.match(await key.innerText(), /Taken out by ops at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+9: “billing dispute”/);
    const api = (await adminCall(gw.url, "GET", "/admin/v1/channels")).json.data[0].keys[0];
    // A key the provider refused is shown cooling down, with why and until when.
    const refused = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${carolKey}`, "content-type": "application/json" },
      body: JSON.stringify({ ...hello, model: "gpt-4o-2024-08-06" }),
    });
    assert.notEqual(refused.status, 200);
    await ops.reload();
    const spare = ops.locator('[data-testid="channel"][data-channel="spare"] [data-testid="channel-key"]');
    await ops.locator('[data-testid="channel"][data-channel="spare"] [data-testid="channel-key"][data-state="cooling_down"]').waitFor(WAIT);
    assert.match(await spare.innerText(), /Cooling down \(auth, until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+9\)/);
    assert.deepEqual([api.fingerprint, api.state, api.taken_out.reason], [fingerprint, "taken_out", "billing dispute"]);
    const paths = (await adminCall(gw.url, "GET", "/admin/v1/openapi.json")).json.paths as Record<string, unknown>;
    if (paths["/admin/v1/channels/stats"]) {
      const stats = (await adminCall(gw.url, "GET", "/admin/v1/channels/stats?since=1h")).json.data[0].keys[0];
      await key.getByTestId("key-stats").filter({ hasText: `${stats.requests} requests, ${stats.errors} errors` }).waitFor(WAIT);
    }
    if (paths["/admin/v1/channels/{channel}/keys/{fingerprint}/test"]) {
      await key.getByRole("button", { name: `Test key ${fingerprint} of main` }).click();
      await key.getByTestId("key-test-result").filter({ hasText: /^Answered \(gpt-4o-mini\) in \d+ ms\.$/ }).waitFor(WAIT);
    } else {
      assert.equal(await key.getByTestId("key-test").count(), 0, "no Test button without the endpoint");
    }
    await check(ops, "channels");
    await key.getByRole("button", { name: `Put key ${fingerprint} of main back` }).click();
    await ops.locator('[data-testid="channel-key"][data-state="in_rotation"]').waitFor(WAIT);
  });

  test("the Reports page shows, by user, the revenue GET /admin/v1/usage?by=user reports, to the nano", async () => {
    const ops = await operator();
    await open(ops, "reports");
    const api = (await adminCall(gw.url, "GET", "/admin/v1/usage?by=user&since=30d")).json.data as { key: string; requests: number; cost: string }[];
    const carol = api.find((r) => r.key === "carol")!;
    assert.ok(carol && carol.cost !== "0", JSON.stringify(api));
    for (const r of api) {
      await ops.locator(`[data-testid="report-row"][data-key="${r.key}"] [data-testid="report-revenue"]`)
        .filter({ hasText: new RegExp(`^${r.cost.replace(".", "\\.")}$`) }).waitFor(WAIT);
    }
    assert.equal(await ops.getByTestId("report-row").count(), api.length);
    // The CSV link is offered when the API's document lists usage's `format`; it then
    // downloads the same report, the same exact decimals.
    const doc = (await adminCall(gw.url, "GET", "/admin/v1/openapi.json")).json;
    const csvOffered = (doc.paths["/admin/v1/usage"].get.parameters as { name: string }[]).some((p) => p.name === "format");
    assert.equal(await ops.getByTestId("report-csv").count(), csvOffered ? 1 : 0);
    if (csvOffered) {
      const href = (await ops.getByTestId("report-csv").getAttribute("href"))!;
      assert.equal(href, "/console/api/admin/usage?by=user&since=30d&format=csv");
      const csv = await ops.evaluate(async (url) => (await fetch(url)).text(), href);
      assert.match(csv, new RegExp(`^carol,${carol.requests},.*,${carol.cost.replace(".", "\\.")},`, "m"));
    }
    const text = await ops.getByTestId("report").innerText();
    assert.match(text, new RegExp(`carol\\s+${carol.requests}\\s+\\d+\\s+\\d+\\s+${carol.cost.replace(".", "\\.")}`));
    await check(ops, "reports");
    // Another dimension: by model, the same total.
    await ops.getByLabel("Group by").selectOption("model");
    await ops.getByTestId("report-run").click();
    await ops.locator('[data-testid="report-row"][data-key="gpt-4o-mini"]').waitFor(WAIT);
  });

  test("the Audit page shows the top-up with the admin key's name", async () => {
    const ops = await operator();
    const carol = ops.locator('[data-testid="user-row"][data-user="carol"]');
    await carol.getByRole("button", { name: "Choose carol" }).click();
    await ops.getByTestId("topup-amount").fill("1.000000007");
    await ops.getByTestId("topup-submit").click();
    await ops.getByTestId("topup-message").waitFor(WAIT);
    await open(ops, "audit");
    await ops.getByLabel("Target").fill("carol");
    const topUp = ops.locator('[data-testid="audit-row"][data-action="credit.add"]').filter({ hasText: "1.000000007" });
    await topUp.waitFor(WAIT);
    assert.match(await topUp.innerText(), /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+9\s+ops\s+credit\.add\s+carol\s+1\.000000007/);
    await check(ops, "audit");
  });

  test("traffic and prices: the API's figures when the gateway offers them, else a note", async () => {
    const ops = await operator();
    const paths = (await adminCall(gw.url, "GET", "/admin/v1/openapi.json")).json.paths as Record<string, unknown>;
    await open(ops, "traffic");
    if (paths["/admin/v1/traffic"]) {
      const api = (await adminCall(gw.url, "GET", "/admin/v1/traffic?minutes=60")).json;
      assert.ok(api.total.requests > 0, JSON.stringify(api.total));
      await ops.getByTestId("traffic-cost").filter({ hasText: new RegExp(`^${api.total.cost.replace(".", "\\.")}$`) }).waitFor(WAIT);
      assert.match(await ops.getByTestId("traffic-total").innerText(), new RegExp(`Last 60 minutes: ${api.total.requests} requests, ${api.total.errors} errors`));
      assert.equal(await ops.locator('[data-testid="chart-cost"] svg rect').count(), 60, "a bar a minute");
      assert.match((await ops.getByTestId("chart-cost").getByRole("img").getAttribute("aria-label"))!, /^Cost per minute \(USD\): /);
      // Refreshed every 10 s while shown (the page's clock run forward), not while hidden.
      const live = await signedIn!.newPage();
      await live.clock.install();
      let asked = 0;
      live.on("request", (r) => { if (r.url().includes("/console/api/admin/traffic")) asked++; });
      await live.goto(`${gw.url}/console#/traffic`);
      await live.getByTestId("traffic-total").filter({ hasText: `${api.total.requests} requests` }).waitFor(WAIT);
      assert.equal((await chat(carolKey)).status, 200);
      await live.clock.runFor(10_000);
      await live.getByTestId("traffic-total").filter({ hasText: `${api.total.requests + 1} requests` }).waitFor(WAIT);
      // A string: tsx would wrap a function's inner arrow in a helper the page lacks.
      await live.evaluate('Object.defineProperty(document, "visibilityState", { configurable: true, value: "hidden" })');
      const before = asked;
      await live.clock.runFor(30_000);
      assert.equal(asked, before, "no refresh while the page is hidden");
      await live.close();
    } else {
      await ops.getByTestId("traffic-missing").waitFor(WAIT);
    }
    await check(ops, "traffic");
    await open(ops, "prices");
    if (paths["/admin/v1/prices"]) {
      const model = ops.locator('[data-testid="price-model"][data-model="gpt-4o-mini"]');
      await model.waitFor(WAIT);
      // gateway.yaml's 0.15 per 1M input tokens, charged × 0.7 in group default.
      assert.match(await model.innerText(), /price\s+input\s+1M tokens\s+0\.15\s+own\s+0\.105/);
    } else {
      await ops.getByTestId("prices-missing").waitFor(WAIT);
    }
    await check(ops, "prices");
  });

  test("no page reported an error but the answers it showed", () => {
    // The signed-out page's 401 only: endpoints this gateway lacks are not even asked for.
    assert.deepEqual(problems.filter((p) => !/status of 401/.test(p)), []);
  });
});

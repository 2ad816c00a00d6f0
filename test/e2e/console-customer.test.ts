// The customer's pages end to end in headless Chromium: a customer makes real API calls
// through the gateway (a fake OpenAI upstream answering with usage), then finds one by its
// X-Gateway-Request-Id on Requests with the usage log's cost to the nano, pages to older
// requests, reads the day's spend on Usage as /console/api/me/spend has it, redeems a code an
// operator made and sees the balance the CLI reports, creates and revokes a token (the revoked
// key refused at once; with the operator's switch off, a sentence instead), and copies the
// quick start with this gateway's base URL. Each page is screenshot to
// test-artifacts/console/, labelled throughout, and fits 375 px.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { stringify } from "yaml";
import { formatNano } from "../../src/billing/cost.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { ADMIN_KEYS, adminCall, customerWithToken, ensureConsoleBuilt } from "../helpers/console.js";
import { assertLabelled, assertNoSidewaysScroll } from "../helpers/console-page.js";
import { channel, completionAnswer, config, hello, rawRequest, startRawUpstream, type RawUpstream } from "../integration/support.js";

const artifacts = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const WAIT = { timeout: 10_000 };
/** One page of Requests holds 25 rows: one more makes an older page. */
const CALLS = 26;

/** A gateway with one fake OpenAI channel and the ops admin key; customers may change
 * their own tokens when `customerTokens`. */
function gatewayYaml(upstreamUrl: string, customerTokens: boolean): string {
  return config({ users: {}, tokens: [], channels: [channel("fake", upstreamUrl)], server: { body_timeout: "2s" } }) + stringify({
    console: { customer_tokens: customerTokens },
    admin: { keys: [{ name: "ops", key: ADMIN_KEYS.ops, scopes: ["read", "write", "billing"] }] },
  });
}

describe("the customer's pages in a browser", { timeout: 30_000 }, () => {
  let upstream: RawUpstream;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let key: string;
  /** Request ids of the calls made, oldest first, and what the usage log charged each. */
  const calls: { id: string; cost: string; costNano: bigint }[] = [];
  const problems: string[] = [];

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    const built = ensureConsoleBuilt();
    upstream = await startRawUpstream((body, res) => completionAnswer(res, body.model, "hi", { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801 }));
    gw = await startTestGateway(gatewayYaml(upstream.url, true));
    key = await customerWithToken(gw.url, "carol", "10");
    const ids: string[] = [];
    for (let i = 0; i < CALLS; i++) {
      const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(hello),
      });
      assert.equal(r.status, 200, r.text);
      ids.push(String(r.headers["x-gateway-request-id"]));
    }
    for (const entry of await Promise.all(ids.map((id) => entryOf(gw.store, id)))) {
      calls.push({ id: entry.requestId, cost: formatNano(entry.costNano), costNano: entry.costNano });
    }
    await built;
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "Asia/Tokyo" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gw.url });
    page = await context.newPage();
    page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${gw.url}/console`);
    await page.getByLabel("Access token or admin key").fill(key);
    await page.getByTestId("signin-submit").click();
    await page.getByTestId("balance").waitFor(WAIT);
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
  });

  /** Opens a customer page by its navigation link, by keyboard (focus, Enter). */
  async function open(label: string): Promise<void> {
    const link = page.getByRole("navigation", { name: "Customer pages" }).getByRole("link", { name: label, exact: true });
    await link.focus();
    await page.keyboard.press("Enter");
    await page.locator('[aria-current="page"]').filter({ hasText: label }).waitFor(WAIT);
  }

  /** Screenshots the page wide and at a phone's width, checking it is labelled and fits. */
  async function snap(name: string): Promise<void> {
    await assertLabelled(page);
    await page.screenshot({ path: `${artifacts}customer-${name}.png`, fullPage: true });
    await page.setViewportSize({ width: 375, height: 700 });
    await assertNoSidewaysScroll(page, `${name} at 375 px`);
    await page.screenshot({ path: `${artifacts}customer-${name}-375px.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  const text = async (testid: string): Promise<string> => {
    const el = page.getByTestId(testid);
    await el.waitFor(WAIT);
    return (await el.textContent())!.trim();
  };

  test("Requests: a page of the newest, an older page, one found by its id with the usage log's cost", async () => {
    await open("Requests");
    const rows = page.locator('[data-testid="requests"] tbody tr[data-request-id]');
    await rows.nth(24).waitFor(WAIT);
    assert.equal(await rows.count(), 25);
    const newest = calls.at(-1)!;
    assert.equal(await rows.first().getAttribute("data-request-id"), newest.id, "newest first");
    assert.match(await page.locator("main").innerText(), /Times are in your time zone, Asia\/Tokyo\./);
    assert.match(await rows.first().innerText(), /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+9\s+gpt-4o-mini\s+chat-completions\s+200\s+1234 \/ 567/);
    await snap("requests");

    await page.getByTestId("requests-older").click();
    await page.locator(`tr[data-request-id="${calls[0].id}"]`).waitFor(WAIT);
    assert.equal(await rows.count(), 1, "the 26th request on the older page");
    assert.equal(await page.getByTestId("requests-older").isDisabled(), true, "nothing older");
    await page.getByRole("button", { name: "Newer" }).click();
    await page.locator(`tr[data-request-id="${newest.id}"]`).waitFor(WAIT);

    const sought = calls[3];
    await page.getByLabel("Find by request id").fill(sought.id);
    await page.getByTestId("request-find").click();
    const row = page.locator(`tr[data-request-id="${sought.id}"]`);
    await row.waitFor(WAIT);
    await page.locator('[data-testid="requests"] tbody tr[data-request-id]').nth(1).waitFor({ state: "detached", ...WAIT });
    assert.equal((await row.getByTestId("request-cost").textContent())?.trim(), sought.cost, "the usage log's cost, to the nano");
    assert.ok(sought.costNano > 0n);
    const breakdown = await text("request-breakdown");
    assert.ok(breakdown.includes(`Total ${sought.cost} USD; charged ${sought.cost} USD`), breakdown);
    assert.match(breakdown, /input: 1234 × /);
    await snap("request-found");

    await page.getByLabel("Find by request id").fill("no-such-request-0000");
    await page.getByTestId("request-find").click();
    assert.match(await text("request-missing"), /^Not found: No request 'no-such-request-0000' among this account's requests\.$/);
    assert.equal(await rows.count(), 0);
  });

  test("Usage: the day's spend and the total as /console/api/me/spend has them, the zone named", async () => {
    await open("Usage");
    const today = await text("spend-today");
    const spend = await page.evaluate(async () => (await fetch("/console/api/me/spend?days=30")).json()) as {
      timezone: string; days: { date: string; cost: string; requests: number }[]; total: { cost: string; requests: number };
    };
    // The page's day, looked up by its date: a billing day that ends meanwhile changes nothing.
    const day = await text("spend-today-date");
    assert.equal(today, spend.days.find((d) => d.date === day)?.cost);
    assert.equal(await text("spend-total"), spend.total.cost);
    assert.equal(spend.total.cost, formatNano(calls.reduce((sum, c) => sum + c.costNano, 0n)), "every call's cost, summed exactly");
    assert.equal(spend.total.requests, CALLS);
    assert.equal(await text("spend-zone"), `Days are billing days in the gateway's time zone, ${spend.timezone}.`);
    assert.equal(await page.locator('[data-testid="spend-chart"] rect.chart-bar').count(), 30);
    const days = await page.getByTestId("spend-days").innerText();
    assert.ok(days.includes(`${day}\t${today}\t${spend.days.find((d) => d.date === day)!.requests}`), days);
    assert.match(await page.getByTestId("spend-models").innerText(), new RegExp(`gpt-4o-mini\\s+${spend.total.cost.replace(".", "\\.")} USD · ${CALLS} requests`));
    await snap("usage");
  });

  test("Redeem: a code an operator made credits the balance the CLI reports; a second try is refused plainly", async () => {
    const made = await adminCall(gw.url, "POST", "/admin/v1/codes", { count: 1, amount: "2.000000007", expires: "7d" });
    assert.equal(made.status, 201, made.text);
    const [code] = made.json.codes as string[];
    await open("Redeem");
    await page.getByTestId("redeem-code").fill(code);
    await page.getByTestId("redeem-submit").click();
    const balance = await text("redeem-balance");
    assert.equal(balance, (await gw.accounts.service.user("carol")).balance, "the balance `gateway users show` prints");
    assert.equal(formatNano(10_000_000_000n + 2_000_000_007n - calls.reduce((sum, c) => sum + c.costNano, 0n)), balance);
    await snap("redeem");

    await page.getByTestId("redeem-code").fill(code);
    await page.getByTestId("redeem-submit").click();
    assert.equal(await text("redeem-error"), "This redemption code has been redeemed already.");
    assert.equal(await page.getByRole("alert").count(), 1);

    await open("Overview");
    assert.equal(await text("balance"), balance, "the overview shows the new balance");
    await snap("overview");
  });

  test("Tokens: a new one's key shown once works at once; a quota set; revoked after a confirmation, it is refused", async () => {
    await open("Tokens");
    await page.locator('tr[data-token="carol-main"]').filter({ hasText: "(this session)" }).waitFor(WAIT);
    assert.match(await page.locator("main").innerText(), /Times are in your time zone, Asia\/Tokyo\./);
    await page.getByLabel("Token name").fill("carol-ci");
    await page.getByTestId("token-create").click();
    const newKey = await text("token-key");
    assert.match(await page.getByRole("status").filter({ hasText: "shown this once" }).innerText(), /carol-ci/);
    await page.locator('tr[data-token="carol-ci"]').waitFor(WAIT);
    const call = () => rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${newKey}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    const first = await call();
    assert.equal(first.status, 200);
    const firstCost = formatNano((await entryOf(gw.store, String(first.headers["x-gateway-request-id"]))).costNano);
    await snap("tokens");

    await page.getByLabel("Token", { exact: true }).selectOption("carol-ci");
    await page.getByTestId("token-quota").fill("5.5");
    await page.getByTestId("token-expires").fill("2027-01-31T00:00:00Z");
    await page.getByTestId("token-save").click();
    // The expiry in the viewer's zone (Tokyo: UTC+9).
    const row = page.locator('tr[data-token="carol-ci"]').filter({ hasText: "2027-01-31 09:00:00 UTC+9" });
    await row.waitFor(WAIT);
    assert.match(await row.innerText(), new RegExp(`^carol-ci\\s+sk-gw-\\S+\\s+active\\s+5\\.5\\s+${firstCost.replace(".", "\\.")}\\s+2027-01-31 09:00:00 UTC\\+9$`));
    const stored = (await adminCall(gw.url, "GET", "/admin/v1/tokens/carol-ci")).json;
    assert.equal(stored.quota, "5.5");
    assert.equal(Date.parse(stored.expires), Date.UTC(2027, 0, 31));

    await page.getByTestId("token-revoke").click();
    await page.getByTestId("token-revoke-confirm").click();
    await page.getByRole("status").filter({ hasText: "Token carol-ci revoked." }).waitFor(WAIT);
    const refused = await call();
    assert.equal(refused.status, 401, refused.text);

    // The operator turns customers' token changes off: the page says who manages them, and offers no change.
    gw.swapConfig(gatewayYaml(upstream.url, false));
    await page.reload();
    await page.getByTestId("tokens-operator").waitFor(WAIT);
    assert.equal(await text("tokens-operator"), "Your operator manages your tokens: ask them to create, change or revoke one.");
    assert.equal(await page.getByTestId("token-create").count(), 0);
    assert.equal(await page.getByTestId("token-choose").count(), 0);
    await page.locator('tr[data-token="carol-main"]').waitFor(WAIT);
    await page.screenshot({ path: `${artifacts}customer-tokens-operator-managed.png`, fullPage: true });
    gw.swapConfig(gatewayYaml(upstream.url, true));
  });

  test("Quick start: this gateway's origin as the base URL in every protocol's snippet", async () => {
    await open("Quick start");
    assert.equal(await text("base-url"), gw.url);
    const chat = await text("snippet-chat-completions");
    assert.ok(chat.includes(`OpenAI(base_url="${gw.url}/v1"`), chat);
    assert.ok(chat.includes('model="gpt-4o-mini"'), chat);
    await page.getByLabel("Language of the snippets").selectOption("curl");
    const curl = await text("snippet-chat-completions");
    assert.ok(curl.startsWith(`curl ${gw.url}/v1/chat/completions`), curl);
    assert.doesNotMatch(await page.locator("main").innerText(), /\{base_url\}/);
    await page.getByRole("button", { name: "Copy the chat-completions snippet" }).click();
    await page.getByRole("status").filter({ hasText: "Copied." }).waitFor(WAIT);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), curl, "the snippet as shown is what is copied");
    assert.doesNotMatch(await page.locator("main").innerText(), new RegExp(key), "no key in the page");
    await snap("quickstart");
  });

  test("no page reported an error", () => {
    // The signed-out page's 401, the 404 of the request searched for in vain and the 400 of
    // the code redeemed twice are answers, not page errors.
    assert.deepEqual(problems.filter((p) => !/status of 40[014]/.test(p)), []);
  });
});

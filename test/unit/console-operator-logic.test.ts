// The operator pages' pure logic: the usage report's query and its CSV link (the same
// report, as CSV), paging by cursor, and chart scaling.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  FIRST_PAGE, codesText, offers, currentCursor, keyStateText, listPath, nextPage, niceTop, perSecond, previousPage, ratePercent, scale, usageCsvHref, usageSearch,
} from "../../console/src/pages/operator/logic.js";

test("the CSV link asks for the same report as the table, as CSV", () => {
  const q = { by: "user" as const, since: " 30d ", until: "" };
  assert.equal(usageSearch(q), "by=user&since=30d");
  assert.equal(usageCsvHref(q), "/console/api/admin/usage?by=user&since=30d&format=csv");
  const table = new URLSearchParams(usageSearch(q));
  const csv = new URLSearchParams(usageCsvHref(q).split("?")[1]);
  csv.delete("format");
  assert.deepEqual([...csv], [...table]);
});

test("the time zone goes with by=day only (the API refuses it otherwise); values are encoded", () => {
  assert.equal(usageSearch({ by: "model", timezone: "Asia/Tokyo" }), "by=model");
  assert.equal(usageSearch({ by: "day", timezone: "Asia/Tokyo", since: "2026-01-01T00:00:00+09:00" }),
    "by=day&since=2026-01-01T00%3A00%3A00%2B09%3A00&timezone=Asia%2FTokyo");
});

test("paging: forward by the server's cursor, back to where it was, never before the first", () => {
  assert.equal(currentCursor(FIRST_PAGE), undefined);
  const two = nextPage(FIRST_PAGE, "bob");
  const three = nextPage(two, "carol");
  assert.equal(currentCursor(three), "carol");
  assert.deepEqual(previousPage(three), two);
  assert.equal(currentCursor(previousPage(two)), undefined);
  assert.equal(previousPage(FIRST_PAGE), FIRST_PAGE);
});

test("a list's path carries its filters, page size and cursor under the API's name", () => {
  assert.equal(listPath("users", { prefix: " ali " }, 20, "after", undefined), "users?prefix=ali&limit=20");
  assert.equal(listPath("users", { prefix: "" }, 20, "after", "bob"), "users?limit=20&after=bob");
  assert.equal(listPath("audit", { actor: "ops", target: undefined }, 25, "before", "41"), "audit?actor=ops&limit=25&before=41");
  assert.equal(listPath("tokens", { user: "a&b=c" }, 5, "after", undefined), "tokens?user=a%26b%3Dc&limit=5");
});

test("chart scale: a round top at or above the peak; bars in proportion; nothing negative", () => {
  assert.equal(niceTop(0), 1);
  assert.equal(niceTop(0.3), 0.5);
  assert.equal(niceTop(1), 1);
  assert.equal(niceTop(7), 10);
  assert.equal(niceTop(12), 20);
  assert.equal(niceTop(250), 500);
  assert.equal(niceTop(Number.NaN), 1);
  const s = scale([3, 12, 0], 100);
  assert.equal(s.top, 20);
  assert.equal(s.height(12), 60);
  assert.equal(s.height(20), 100);
  assert.equal(s.height(-5), 0);
  assert.equal(scale([], 100).height(0), 0);
});

test("display figures: requests per second, error rates, key states, codes as a text file", () => {
  assert.equal(perSecond(90), "1.50");
  assert.equal(perSecond(0), "0.00");
  assert.equal(ratePercent(0.0125), "1.25 %");
  assert.equal(ratePercent(null), "—");
  assert.equal(keyStateText("taken_out"), "Taken out");
  assert.equal(keyStateText("cooling_down"), "Cooling down");
  assert.equal(keyStateText("in_rotation"), "In rotation");
  assert.equal(keyStateText("??"), "Unknown");
  assert.equal(codesText(["A", "B"]), "A\nB\n");
  assert.equal(codesText([]), "");
});

test("what the gateway offers is read from its OpenAPI document: a path, a method, a query parameter", () => {
  const doc = { paths: {
    "/admin/v1/usage": { get: { parameters: [{ name: "by", in: "query" }, { name: "format", in: "query" }] } },
    "/admin/v1/codes": { post: {} },
    "/admin/v1/channels/{channel}/keys/{fingerprint}/out": { post: { parameters: [{ name: "channel", in: "path" }] } },
  } };
  assert.equal(offers(doc, "GET", "/admin/v1/usage"), true);
  assert.equal(offers(doc, "GET", "/admin/v1/usage", "format"), true);
  assert.equal(offers(doc, "GET", "/admin/v1/usage", "q"), false);
  assert.equal(offers(doc, "GET", "/admin/v1/codes"), false, "POST only: no list of batches");
  assert.equal(offers(doc, "POST", "/admin/v1/codes"), true);
  assert.equal(offers(doc, "POST", "/admin/v1/channels/{channel}/keys/{fingerprint}/out", "channel"), false, "a path parameter is not a query one");
  assert.equal(offers(doc, "GET", "/admin/v1/traffic"), false);
  assert.equal(offers({}, "GET", "/admin/v1/usage"), false);
});

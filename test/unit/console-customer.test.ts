// The customer pages' pure parts, run in node: chart bars scaled on exact nano-units (never a
// float reading of money), snippets given the page's origin, the requests' paging cursors
// kept as the server handed them, and the page addresses.

import assert from "node:assert/strict";
import { test } from "node:test";
import { barLengths, largest } from "../../console/src/pages/customer/chart.js";
import { currentCursor, hasNewer, newer, newest, older, pageQuery } from "../../console/src/pages/customer/paging.js";
import { fillBaseUrl } from "../../console/src/pages/customer/snippets.js";
import { hashOf, viewOfHash } from "../../console/src/pages/customer/views.js";

test("bars: the largest amount gets the full length, the others their exact share", () => {
  assert.deepEqual(barLengths(["0", "1", "2", "4"], 100), [0, 25, 50, 100]);
  assert.deepEqual(barLengths(["0.3", "0.1", "0.2"], 3), [3, 1, 2], "0.1 + 0.2 is 0.3 here: no float");
  assert.deepEqual(barLengths(["1", "0.005"], 100), [100, 1], "a bar rounds half up (0.5 units → 1)");
  assert.deepEqual(barLengths(["1", "0.0049"], 100), [100, 1], "spend too small to draw still shows one unit");
  assert.deepEqual(barLengths(["0", "0"], 100), [0, 0], "no spend: no bars, no division by zero");
  assert.deepEqual(barLengths([], 100), []);
  assert.deepEqual(barLengths(["-1", "2"], 10), [0, 10], "a refund below zero draws nothing");
});

test("bars: amounts beyond a float's precision are still scaled exactly", () => {
  // 9007199254740993 is not a float: Number() would read it as ...992.
  assert.deepEqual(barLengths(["9007199254740993", "9007199254740992.999999999"], 1_000_000_000), [1_000_000_000, 1_000_000_000]);
  assert.deepEqual(barLengths(["0.000000003", "0.000000001"], 3), [3, 1]);
  // Exactly 14.5 units, which rounds up; a float makes 0.145 × 100 14.4999… and rounds down.
  assert.deepEqual(barLengths(["1", "0.145"], 100), [100, 15]);
  assert.equal(largest(["0.1", "0.300000000", "0.29999999"]), "0.300000000", "the largest as the server wrote it");
  assert.equal(largest([]), "0");
});

test("bars: an amount that is not an exact decimal is refused, not guessed", () => {
  assert.throws(() => barLengths(["1e3"], 10), /not an exact amount/);
  assert.throws(() => barLengths(["0.1234567891"], 10), /not an exact amount/);
  assert.throws(() => barLengths(["1"], 0), /whole number/);
  assert.throws(() => barLengths(["1"], 2.5), /whole number/);
});

test("snippets: every placeholder becomes the page's origin, without a trailing slash", () => {
  const snippet = 'client = OpenAI(base_url="{base_url}/v1")\ncurl {base_url}/v1/chat/completions';
  assert.equal(fillBaseUrl(snippet, "{base_url}", "https://gw.example.com/"),
    'client = OpenAI(base_url="https://gw.example.com/v1")\ncurl https://gw.example.com/v1/chat/completions');
  assert.equal(fillBaseUrl(snippet, "{base_url}", "http://127.0.0.1:8080"), snippet.replaceAll("{base_url}", "http://127.0.0.1:8080"));
  // The origin is text, not a replacement pattern: "$&" stays as written.
  assert.equal(fillBaseUrl("{base_url}/x", "{base_url}", "http://h/$&"), "http://h/$&/x");
  assert.equal(fillBaseUrl("no placeholder", "{base_url}", "http://h"), "no placeholder");
  assert.equal(fillBaseUrl("{base_url}", "", "http://h"), "{base_url}", "an empty placeholder replaces nothing");
});

test("paging: Older follows the server's next, Newer goes back the same way", () => {
  let trail = newest;
  assert.equal(currentCursor(trail), undefined);
  assert.equal(hasNewer(trail), false);
  assert.equal(pageQuery(trail, 25), "limit=25");
  trail = older(trail, "1764288000123-2");
  assert.equal(currentCursor(trail), "1764288000123-2");
  assert.equal(pageQuery(trail, 25), "limit=25&before=1764288000123-2");
  trail = older(trail, "1764287000000-1");
  assert.equal(currentCursor(trail), "1764287000000-1");
  assert.equal(older(trail, undefined), trail, "no next: no older page, the trail stays");
  assert.equal(older(trail, ""), trail);
  trail = newer(trail);
  assert.equal(currentCursor(trail), "1764288000123-2");
  trail = newer(trail);
  assert.equal(currentCursor(trail), undefined);
  assert.equal(hasNewer(trail), false);
  assert.equal(newer(trail), trail, "the newest page stays the newest");
  // A cursor is passed on as written, encoded for the query.
  assert.equal(pageQuery(older(newest, "a&b=c"), 5), "limit=5&before=a%26b%3Dc");
});

test("page addresses: each page has its hash, anything else is the overview", () => {
  for (const view of ["overview", "usage", "requests", "tokens", "redeem", "quickstart"] as const) assert.equal(viewOfHash(hashOf(view)), view);
  assert.equal(viewOfHash(""), "overview");
  assert.equal(viewOfHash("#/nope"), "overview");
  assert.equal(viewOfHash("#requests"), "requests");
});

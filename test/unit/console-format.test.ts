// The console's front-end formatting, run in node: money stays exact (the page's nano-unit
// arithmetic agrees with the server's formatNano on every value, no float anywhere) and times
// are shown in the viewer's zone with the zone named.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { formatNano as serverFormatNano } from "../../src/billing/cost.js";
import { formatNano, isExactDecimal, parseNano, topUpAmount } from "../../console/src/money.js";
import { formatTime, zoneNote } from "../../console/src/time.js";

test("the page writes nano-units exactly as the server does, and reads them back", () => {
  fc.assert(fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (nano) => {
    const text = formatNano(nano);
    assert.equal(text, serverFormatNano(nano));
    assert.ok(isExactDecimal(text), text);
    assert.equal(parseNano(text), nano);
  }), { numRuns: 2000 });
});

test("amounts a float would round stay exact", () => {
  assert.equal(formatNano(9899999n), "0.009899999");
  assert.equal(formatNano(parseNano("0.1") + parseNano("0.2")), "0.3");
  assert.equal(formatNano(parseNano("9007199254740993.000000001")), "9007199254740993.000000001");
  assert.equal(formatNano(-1n), "-0.000000001");
  assert.equal(formatNano(0n), "0");
});

test("a typed top-up is read into the admin API's exact form, or refused with a reason", () => {
  assert.deepEqual(topUpAmount(" 5.50 "), { amount: "5.5" });
  assert.deepEqual(topUpAmount("12"), { amount: "12" });
  assert.deepEqual(topUpAmount("0.000000001"), { amount: "0.000000001" });
  assert.deepEqual(topUpAmount("-3"), { amount: "-3" });
  for (const bad of ["", "abc", "1e3", "1.0000000001", "1,5", "0", "0.000", "Infinity", "0x10"]) {
    assert.ok("error" in topUpAmount(bad), `${JSON.stringify(bad)} is refused`);
  }
});

test("a time is shown in the zone asked for, with that zone named", () => {
  const ms = Date.UTC(2026, 10, 27, 23, 5, 9);
  assert.equal(formatTime(ms, "UTC"), "2026-11-27 23:05:09 UTC");
  assert.equal(formatTime(ms, "Asia/Tokyo"), "2026-11-28 08:05:09 UTC+9");
  assert.equal(formatTime(ms, "America/New_York"), "2026-11-27 18:05:09 UTC-5");
  assert.equal(formatTime(Date.UTC(2026, 6, 1, 12, 0, 0), "Europe/Paris"), "2026-07-01 14:00:00 UTC+2");
  assert.match(zoneNote("Europe/Paris"), /Europe\/Paris/);
});

test("by default a time is in the viewer's own zone", () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  assert.equal(formatTime(0), formatTime(0, zone));
  assert.match(zoneNote(), new RegExp(zone.replace(/[/+]/g, "\\$&")));
});

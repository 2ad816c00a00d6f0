// Calendar periods in a time zone: days, ISO weeks and months, daylight-saving days of 23
// and 25 hours, and month ends.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Calendar, isTimeZone } from "../../src/billing/calendar.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

test("UTC: the day, the ISO week (from Monday) and the month", () => {
  const c = new Calendar();
  const now = at("2026-11-27T18:30:00Z"); // a Friday
  assert.deepEqual([iso(c.period("day", "UTC", now).start), iso(c.period("day", "UTC", now).end)], ["2026-11-27T00:00:00.000Z", "2026-11-28T00:00:00.000Z"]);
  assert.deepEqual([iso(c.period("week", "UTC", now).start), iso(c.period("week", "UTC", now).end)], ["2026-11-23T00:00:00.000Z", "2026-11-30T00:00:00.000Z"]);
  assert.deepEqual([iso(c.period("month", "UTC", now).start), iso(c.period("month", "UTC", now).end)], ["2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"]);
  const sunday = at("2026-11-29T23:59:59Z");
  assert.equal(iso(c.period("week", "UTC", sunday).start), "2026-11-23T00:00:00.000Z");
  assert.equal(iso(c.period("month", "UTC", at("2026-12-31T12:00:00Z")).end), "2027-01-01T00:00:00.000Z");
});

test("a zone's midnight, not UTC's: Tokyo and New York", () => {
  const c = new Calendar();
  const now = at("2026-11-27T16:00:00Z"); // 01:00 on the 28th in Tokyo, 11:00 on the 27th in New York
  assert.equal(iso(c.period("day", "Asia/Tokyo", now).start), "2026-11-27T15:00:00.000Z");
  assert.equal(iso(c.period("day", "America/New_York", now).start), "2026-11-27T05:00:00.000Z");
  assert.equal(iso(c.period("month", "Asia/Tokyo", at("2026-11-30T15:30:00Z")).start), "2026-11-30T15:00:00.000Z", "already December in Tokyo");
});

test("daylight-saving days last 23 and 25 hours", () => {
  const c = new Calendar();
  const spring = c.period("day", "Europe/Berlin", at("2026-03-29T12:00:00Z"));
  assert.equal(spring.end - spring.start, 23 * 3600_000);
  assert.equal(iso(spring.start), "2026-03-28T23:00:00.000Z");
  const autumn = c.period("day", "Europe/Berlin", at("2026-10-25T12:00:00Z"));
  assert.equal(autumn.end - autumn.start, 25 * 3600_000);
  assert.equal(iso(autumn.end), "2026-10-25T23:00:00.000Z");
});

test("the boundaries: the first instant of a period is in it, its end is not", () => {
  const c = new Calendar();
  const start = at("2026-11-27T00:00:00Z");
  assert.equal(c.period("day", "UTC", start).start, start);
  assert.equal(c.period("day", "UTC", start - 1).end, start);
});

test("isTimeZone knows IANA names and refuses others", () => {
  assert.equal(isTimeZone("Europe/Berlin"), true);
  assert.equal(isTimeZone("UTC"), true);
  assert.equal(isTimeZone("Mars/Olympus"), false);
});

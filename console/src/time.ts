// Times in the browser: the server sends epoch milliseconds; the page shows them in the
// viewer's time zone and names that zone, so "14:02" is never ambiguous.

/** The viewer's IANA time zone (e.g. "Europe/Paris"), as the browser reports it. */
export function viewerZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** `ms` as a date and time in `zone` (default: the viewer's), with its offset from UTC:
 * "2026-11-27 14:02:05 UTC+1". The date is written year-month-day whatever the locale. */
export function formatTime(ms: number, zone: string = viewerZone()): string {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "shortOffset",
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? "";
  // ICU writes "GMT+9", and "GMT" or "GMT+0" for no offset: shown as UTC+9 and UTC.
  const offset = part("timeZoneName").replace(/^GMT(\+0)?$/, "UTC").replace(/^GMT/, "UTC");
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}:${part("second")} ${offset}`;
}

/** The sentence under a table of times: which zone they are in. */
export function zoneNote(zone: string = viewerZone()): string {
  return `Times are in your time zone, ${zone}.`;
}

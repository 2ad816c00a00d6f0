// Live traffic for the last hour: requests per second, errors and cost per minute, as bar
// charts with the totals in text; refreshed every 10 s while the page is visible. Hidden
// behind a note when the gateway has no /admin/v1/traffic.
import { useEffect, useState } from "preact/hooks";
import { formatTime, zoneNote } from "../../time.js";
import { BarChart } from "./bar-chart.js";
import { perSecond } from "./logic.js";
import { CURRENCY, msOf } from "./list.js";
import { useAdmin, useOffers } from "./use-admin.js";

interface TrafficMinute {
  readonly minute: string;
  readonly requests: number;
  readonly errors: number;
  readonly cost: string;
}
interface Traffic {
  readonly minutes: number;
  readonly total: { readonly requests: number; readonly errors: number; readonly cost: string };
  readonly data: readonly TrafficMinute[];
}

const REFRESH_MS = 10_000;

/** A counter that ticks every `ms` while the document is visible, and at once when it shows again. */
function useVisibleTicks(ms: number): number {
  const [ticks, setTicks] = useState(0);
  useEffect(() => {
    const tick = () => { if (document.visibilityState === "visible") setTicks((n) => n + 1); };
    const timer = setInterval(tick, ms);
    document.addEventListener("visibilitychange", tick);
    return () => { clearInterval(timer); document.removeEventListener("visibilitychange", tick); };
  }, [ms]);
  return ticks;
}

export function TrafficPage() {
  const ticks = useVisibleTicks(REFRESH_MS);
  const offered = useOffers();
  const absent = offered !== undefined && !offered("GET", "/admin/v1/traffic");
  const traffic = useAdmin<Traffic>(offered === undefined || absent ? undefined : "traffic?minutes=60", ticks);
  const t = traffic.data;
  const label = (m: TrafficMinute) => formatTime(msOf(m.minute) ?? 0);
  const last = t?.data[t.data.length - 1];
  return (
    <section aria-labelledby="traffic-title">
      <h1 id="traffic-title">Traffic</h1>
      {(absent || traffic.missing) && <p data-testid="traffic-missing">This gateway does not report live traffic yet (no /admin/v1/traffic).</p>}
      {traffic.error && !traffic.missing && <p role="alert" class="error">{traffic.error}</p>}
      {t && (
        <>
          <p data-testid="traffic-total">Last {t.minutes} minutes: <strong>{t.total.requests}</strong> requests, <strong>{t.total.errors}</strong> errors, cost <strong data-testid="traffic-cost">{t.total.cost}</strong> {CURRENCY}.
            {last && <> This minute so far: {perSecond(last.requests)} requests/s.</>}</p>
          <BarChart testid="chart-rps" title="Requests per second, per minute" summary={`Peak ${perSecond(Math.max(0, ...t.data.map((m) => m.requests)))} requests/s`}
            bars={t.data.map((m) => ({ label: label(m), value: m.requests / 60, text: `${perSecond(m.requests)} requests/s (${m.requests} requests)` }))} />
          <BarChart testid="chart-errors" title="Errors per minute" summary={`${t.total.errors} errors in all`}
            bars={t.data.map((m) => ({ label: label(m), value: m.errors, text: `${m.errors} errors` }))} />
          {/* Bar heights are a drawing; the figures in text stay the exact decimals. */}
          <BarChart testid="chart-cost" title={`Cost per minute (${CURRENCY})`} summary={`${t.total.cost} ${CURRENCY} in all`}
            bars={t.data.map((m) => ({ label: label(m), value: Number(m.cost), text: `${m.cost} ${CURRENCY}` }))} />
          <p class="hint">Refreshed every 10 seconds while this page is shown. {zoneNote()}</p>
        </>
      )}
    </section>
  );
}

// Usage: what the customer spent per day over the last 30 days (a bar chart) and per model
// (a bar list), exact decimals in every label. Days are the gateway's billing days, in the
// zone it bills in, named on the page.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call } from "../../api.js";
import { Money } from "../money.js";
import { barLengths, largest } from "./chart.js";

/** GET /console/api/me/spend. */
export interface Spend {
  readonly timezone: string;
  readonly days: readonly { readonly date: string; readonly cost: string; readonly requests: number }[];
  readonly models: readonly { readonly model: string; readonly cost: string; readonly requests: number }[];
  readonly total: { readonly cost: string; readonly requests: number };
}

const DAYS = 30;
/** The chart's drawing units (the SVG scales to the page's width). */
const CHART = { width: 600, height: 160, top: 4, bottom: 1 };
const LIST_BAR = 100;

export function Usage({ currency }: { currency: string }) {
  const [spend, setSpend] = useState<Spend>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<Spend>("GET", `/console/api/me/spend?days=${DAYS}`).then(setSpend,
      (err: Error) => setError(err instanceof ApiError ? err.message : "The gateway could not be reached."));
  }, []);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!spend) return <p aria-busy="true">Loading…</p>;
  const today = spend.days[spend.days.length - 1];
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <p class="hint" data-testid="spend-zone">Days are billing days in the gateway's time zone, {spend.timezone}.</p>
      <dl class="figures">
        <div><dt>Today (<span data-testid="spend-today-date">{today.date}</span>)</dt><dd><Money testid="spend-today" amount={today.cost} currency={currency} /></dd></div>
        <div><dt>Last {spend.days.length} days</dt><dd><Money testid="spend-total" amount={spend.total.cost} currency={currency} /></dd></div>
        <div><dt>Requests in those days</dt><dd data-testid="spend-requests">{spend.total.requests}</dd></div>
      </dl>
      <h2 id="days-title">Spend by day</h2>
      <DayChart spend={spend} currency={currency} />
      <h2 id="models-title">Spend by model</h2>
      <ModelBars spend={spend} currency={currency} />
    </section>
  );
}

function DayChart({ spend, currency }: { spend: Spend; currency: string }) {
  const costs = spend.days.map((d) => d.cost);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const heights = barLengths(costs, plot);
  const slot = CHART.width / spend.days.length;
  const max = largest(costs);
  const first = spend.days[0].date;
  const last = spend.days[spend.days.length - 1].date;
  return (
    <figure class="chart">
      <p class="hint" aria-hidden="true">Highest day: {max} {currency}</p>
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} role="img" aria-labelledby="days-svg-title days-svg-desc" data-testid="spend-chart">
        <title id="days-svg-title">Spend by day, {first} to {last}</title>
        <desc id="days-svg-desc">Highest day {max} {currency}; total {spend.total.cost} {currency}. The table below lists every day.</desc>
        <line class="chart-axis" x1={0} x2={CHART.width} y1={CHART.height - CHART.bottom} y2={CHART.height - CHART.bottom} />
        {spend.days.map((d, i) => (
          <rect key={d.date} class="chart-bar" x={i * slot + 1} width={Math.max(1, slot - 2)}
            y={CHART.height - CHART.bottom - heights[i]} height={heights[i]}>
            <title>{d.date}: {d.cost} {currency}, {d.requests} requests</title>
          </rect>
        ))}
      </svg>
      <p class="chart-labels" aria-hidden="true"><span>{first}</span><span>{last}</span></p>
      <figcaption class="hint">Each bar is a day; hover or read the table for exact figures.</figcaption>
      {/* A table's height ignores the hiding box's, so a wrapper hides it. */}
      <div class="sr-only">
        <table data-testid="spend-days">
          <caption>Spend by day, in {currency}</caption>
          <thead><tr><th scope="col">Day</th><th scope="col">Spend</th><th scope="col">Requests</th></tr></thead>
          <tbody>
            {spend.days.map((d) => <tr key={d.date} data-date={d.date}><th scope="row">{d.date}</th><td>{d.cost}</td><td>{d.requests}</td></tr>)}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

function ModelBars({ spend, currency }: { spend: Spend; currency: string }) {
  if (spend.models.length === 0) return <p>No requests in these days.</p>;
  const lengths = barLengths(spend.models.map((m) => m.cost), LIST_BAR);
  return (
    <ul class="bar-list" data-testid="spend-models" aria-labelledby="models-title">
      {spend.models.map((m, i) => (
        <li key={m.model} data-model={m.model}>
          <span class="bar-name">{m.model}</span>
          <svg class="bar-track" viewBox={`0 0 ${LIST_BAR} 8`} preserveAspectRatio="none" aria-hidden="true">
            <rect class="chart-bar" x={0} y={0} height={8} width={lengths[i]} />
          </svg>
          <span class="bar-value"><Money amount={m.cost} currency={currency} /> · {m.requests} requests</span>
        </li>
      ))}
    </ul>
  );
}

// A hand-drawn SVG bar chart with its figures as accessible text: the SVG is named by a
// title and a summary, and each bar carries its value in a <title> (shown on hover too).
import { scale } from "./logic.js";

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** What the bar's title says (e.g. an exact money figure). */
  readonly text: string;
}

const W = 600;
const H = 120;

export function BarChart({ title, summary, bars, testid }: { title: string; summary: string; bars: readonly Bar[]; testid?: string }) {
  const span = bars.length === 0 ? "" : ` From ${bars[0].label} to ${bars[bars.length - 1].label}.`;
  const s = scale(bars.map((b) => b.value), H);
  const width = bars.length === 0 ? W : W / bars.length;
  return (
    <figure class="chart" data-testid={testid}>
      <figcaption>{title} <span class="hint">(top of scale {s.top})</span></figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`${title}: ${summary}`} width="100%" height={H}>
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} class="axis" />
        {bars.map((b, i) => {
          const h = s.height(b.value);
          return (
            <rect key={b.label} x={i * width + width * 0.1} y={H - h} width={width * 0.8} height={h} class="bar">
              <title>{`${b.label}: ${b.text}`}</title>
            </rect>
          );
        })}
      </svg>
      <p class="hint">{summary}.{span}</p>
    </figure>
  );
}

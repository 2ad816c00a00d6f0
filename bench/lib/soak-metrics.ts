// Reads the gateway's Prometheus text at /metrics: one scrape, and the sum of a metric's
// series (optionally only those with given label values), or undefined when it is absent.

export async function scrape(base: URL, path = "/metrics"): Promise<string> {
  const res = await fetch(new URL(path, base), { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
  return res.text();
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Σ of the samples of metric `name` whose labels include `labels`; undefined when none exist. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(LABEL)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).some(([k, v]) => have[k] !== v)) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

/** Whether the metric is declared at all (a gauge may have no sample yet). */
export const hasMetric = (text: string, name: string): boolean =>
  text.includes(`# TYPE ${name} `) || metricSum(text, name) !== undefined;

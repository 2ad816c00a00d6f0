// Reads a running gateway's /metrics: fetches the Prometheus text exposition and picks the
// samples of the metrics asked for, with their labels. Enough of the format for what the
// gateway itself writes (no timestamps, escaped label values).

/** One sample: its labels and value. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([A-Za-z_]\w*)="((?:[^"\\]|\\.)*)"/g;

function unescaped(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

/** The samples of the named metrics in an exposition, by metric name. */
export function samplesOf(text: string, names: readonly string[]): Map<string, Sample[]> {
  const found = new Map<string, Sample[]>(names.map((n) => [n, []]));
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    const list = m ? found.get(m[1]) : undefined;
    if (!m || !list) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (m[2] ?? "").matchAll(LABEL)) labels[name] = unescaped(value);
    list.push({ labels, value: Number(m[3]) });
  }
  return found;
}

/** The exposition at `url`; throws with a short reason when nothing usable answers. */
export async function scrape(url: string, timeoutMs = 3_000): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new Error(cause ?? (error as Error).message);
  }
  if (res.status !== 200) throw new Error(`it answered ${res.status}`);
  return res.text();
}

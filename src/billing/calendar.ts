// Calendar periods in a time zone: the day, the ISO week (Monday first) or the month a time
// falls in, as epoch-ms bounds, so a budget "per day" resets at the operator's midnight,
// daylight-saving days included (23 or 25 hours long).

export type CalendarUnit = "day" | "week" | "month";

export interface Period {
  /** Epoch ms, inclusive. */
  readonly start: number;
  /** Epoch ms, exclusive: the next period's start. */
  readonly end: number;
}

/** Whether `timeZone` is an IANA zone this runtime knows ("UTC", "Europe/Berlin"). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The periods a budget is counted in, remembered per unit and zone until they end: the
 * request path asks once per request and the answer changes once a day at most.
 */
export class Calendar {
  readonly #formatters = new Map<string, Intl.DateTimeFormat>();
  readonly #current = new Map<string, Period>();

  /** The period of `unit` in `timeZone` that `now` falls in. */
  period(unit: CalendarUnit, timeZone: string, now: number): Period {
    const id = `${unit} ${timeZone}`;
    const known = this.#current.get(id);
    if (known && now >= known.start && now < known.end) return known;
    const found = this.#compute(unit, timeZone, now);
    if (this.#current.size > 1000) this.#current.clear(); // zones come from the config: a handful
    this.#current.set(id, found);
    return found;
  }

  #compute(unit: CalendarUnit, timeZone: string, now: number): Period {
    const { year, month, day, weekday } = this.#wall(timeZone, now);
    let first: [number, number, number];
    let next: [number, number, number];
    if (unit === "day") {
      first = [year, month, day];
      next = [year, month, day + 1];
    } else if (unit === "week") {
      const back = (weekday + 6) % 7; // days since Monday
      first = [year, month, day - back];
      next = [year, month, day - back + 7];
    } else {
      first = [year, month, 1];
      next = [year, month + 1, 1];
    }
    return { start: this.#midnight(timeZone, ...first), end: this.#midnight(timeZone, ...next) };
  }

  /** The wall-clock date in the zone, and its weekday (0 = Sunday). */
  #wall(timeZone: string, at: number): { year: number; month: number; day: number; weekday: number; hour: number; minute: number; second: number } {
    const parts: Record<string, string> = {};
    for (const p of this.#formatter(timeZone).formatToParts(at)) parts[p.type] = p.value;
    const year = Number(parts.year);
    const month = Number(parts.month);
    const day = Number(parts.day);
    return {
      year, month, day, weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay(),
      hour: Number(parts.hour) % 24, minute: Number(parts.minute), second: Number(parts.second),
    };
  }

  /** The instant the zone's wall clock reads 00:00 on the date (day may overflow the month:
   * Date.UTC normalises it). Where midnight is skipped by a clock change, the first instant
   * of the day. */
  #midnight(timeZone: string, year: number, month: number, day: number): number {
    const wall = Date.UTC(year, month - 1, day);
    let guess = wall - this.#offset(timeZone, wall);
    // The offset at the guess may differ (a change between UTC midnight and local midnight).
    guess = wall - this.#offset(timeZone, guess);
    return guess;
  }

  /** Local time minus UTC at `at`, in ms. */
  #offset(timeZone: string, at: number): number {
    const w = this.#wall(timeZone, at);
    const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
    return asUtc - Math.floor(at / 1000) * 1000;
  }

  #formatter(timeZone: string): Intl.DateTimeFormat {
    let f = this.#formatters.get(timeZone);
    if (!f) {
      f = new Intl.DateTimeFormat("en-US", {
        timeZone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
      });
      this.#formatters.set(timeZone, f);
    }
    return f;
  }
}

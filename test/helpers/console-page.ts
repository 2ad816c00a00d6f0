// Checks a console page in the browser must pass whatever it shows: every control named for a
// screen reader, and no sideways scrolling of the page itself at the width it is shown.

import assert from "node:assert/strict";
import type { Page } from "playwright-core";

/** Every control of the page has a name a screen reader says: inputs and selects a <label>
 * (or aria-label), buttons text or aria-label. */
export async function assertLabelled(page: Page): Promise<void> {
  const unnamed = await page.evaluate(() => [
    ...[...document.querySelectorAll("input, select, textarea")].filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute("aria-label")),
    ...[...document.querySelectorAll("button")].filter((el) => !el.textContent?.trim() && !el.getAttribute("aria-label")),
  ].map((el) => el.outerHTML));
  assert.deepEqual(unnamed, []);
}

/** The page does not scroll sideways (wide tables scroll in their own box). */
export async function assertNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${what}: no sideways scrolling (overflow ${overflow} px)`);
}

// Reads new-api's database once and closes it: the plan is made from what was read.

import { planImport, type ImportPlan } from "./plan.js";
import { readNewApi } from "./records.js";
import { openNewApiSource, type SourceLocation } from "./source.js";

/** The plan for the database at `location`. Throws what opening or reading it throws. */
export async function readPlan(location: SourceLocation): Promise<ImportPlan> {
  const source = await openNewApiSource(location);
  try {
    return planImport(await readNewApi(source));
  } finally {
    await source.close();
  }
}

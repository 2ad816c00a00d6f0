// The gateway's version: package.json's, read when asked. This module sits two folders
// below package.json both as src/runtime/version.ts (through tsx) and as dist/runtime/version.js.

import { readFileSync } from "node:fs";

/** The `version` of the package.json at the repository root. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
  if (typeof manifest.version !== "string") throw new Error("package.json has no version");
  return manifest.version;
}

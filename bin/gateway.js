#!/usr/bin/env node
// The `gateway` command. Runs the compiled JavaScript in dist/ (built by `npm ci` through
// the prepare script, or `npm run build`) when it is up to date with src/; otherwise it
// loads the TypeScript sources through tsx, so an edit is never served stale.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const compiled = `${root}dist/cli/main.js`;

/** Newest modification time of any file under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

// `gateway logs | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on("error", (err) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

let main;
if (existsSync(compiled) && statSync(compiled).mtimeMs >= newest(`${root}src`)) {
  ({ main } = await import(compiled));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli/main.ts"));
}
process.exitCode = await main(process.argv.slice(2));

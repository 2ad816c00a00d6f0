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

// Under npm (`npx gateway`, `npm start`) this process's parent is npm's `sh -c`, and npm
// forwards a SIGTERM to that shell, which dies of it without passing it on: this process
// would go on serving, orphaned. Its parent going away is taken as that SIGTERM. (Ctrl-C
// reaches every process of the terminal's group, this one included.) Only when npm ran this
// command itself (npx quotes it: 'gateway'), not a process npm started (a test runner).
if (/^'?(gateway|node bin\/gateway\.js)('|\s|$)/.test(process.env.npm_lifecycle_script ?? "")) {
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    // Only once something listens for SIGTERM: a gateway still starting is told when it
    // serves, and one already stopping (a cluster primary stops listening then) is not
    // killed by a second signal.
    if (process.ppid === parent || process.listenerCount("SIGTERM") === 0) return;
    clearInterval(orphaned);
    process.kill(process.pid, "SIGTERM");
  }, 250);
  orphaned.unref();
}

let main;
if (existsSync(compiled) && statSync(compiled).mtimeMs >= newest(`${root}src`)) {
  ({ main } = await import(compiled));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli/main.ts"));
}
process.exitCode = await main(process.argv.slice(2));

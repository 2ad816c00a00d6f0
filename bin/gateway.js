#!/usr/bin/env node
// The `gateway` command. Node 20 cannot run TypeScript itself, so the CLI is loaded
// through tsx's loader (a runtime dependency); the code it runs is plain JavaScript.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));

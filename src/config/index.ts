// The config engine's public face: load and compile gateway.yaml, the error it throws,
// the reloader that watches it and swaps what it compiles, and the helpers other layers
// need. Everything else in src/config is internal.

export { ConfigError, formatIssue, type ConfigIssue } from "./issues.js";
export { compileSource, loadConfigFile, sourceHashOf, type SourceOptions } from "./load.js";
export { compile, DEFAULTS, type CompileContext, type CompileResult } from "./compile.js";
export { createReloader, keepStaticSettings, type Reloader, type ReloaderOptions, type ReloadOutcome, type ReloadReason } from "./reload.js";
export { requestSchemaFile, hashKey } from "./crossref.js";
export { gatewaySchemaPath } from "./schema.js";
export { parseDuration, parseSize, parseListen, parseDate } from "./units.js";
export { toNano, toPpm } from "./money.js";
